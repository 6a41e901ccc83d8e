import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { RateLimited } from '../../../src/errors.js'
import { OAuthError } from '../../../src/oidc/oauth-error.js'
import type { OidcServices } from '../../../src/oidc/provider.js'
import { createUser, tempDir } from '../../helper.js'
import { createClient, OIDC, oidcApp, type OidcApp } from '../../routes/api/oidc-support.js'

/* Client authentication (src/oidc/client-auth.ts) on the real store, secrets and counters. */

// every character RFC 6749 §2.3.1's form-urlencoding changes: a client that skips it cannot authenticate
const ODD_SECRET = 'p@ss:word+with%25 and/slash=and more than thirty-two'
const formEncoded = (value: string) => encodeURIComponent(value).replaceAll('%20', '+')
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${formEncoded(id)}:${formEncoded(secret)}`).toString('base64')}`
const rawBasic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`
const CONTEXT = { ip: '198.51.100.7' }

interface Setup { env: OidcApp, oidc: OidcServices, web: string, post: string, spa: string }

async function setup (t: Test, values: Record<string, unknown> = {}): Promise<Setup> {
  const dir = tempDir(t)
  const file = join(dir, 'clients.json')
  process.env.GATEHOUSE_TEST_ODD_SECRET = ODD_SECRET
  t.teardown(() => { delete process.env.GATEHOUSE_TEST_ODD_SECRET })
  writeFileSync(file, JSON.stringify([{ client_id: 'odd-secret', name: 'Odd', type: 'confidential', redirect_uris: ['https://odd.example/cb'], client_secret_env: 'GATEHOUSE_TEST_ODD_SECRET' }]))
  const env = await oidcApp(t, { OIDC_CLIENTS_FILE: file, ...values })
  const oidc = env.app.services.oidc as OidcServices
  const web = (await createClient(env, { client_id: 'web-app', name: 'Web', type: 'confidential', redirect_uris: ['https://web.example/cb'] })).json().client_secret as string
  const post = (await createClient(env, { client_id: 'post-app', name: 'Post', type: 'confidential', token_endpoint_auth_method: 'client_secret_post', redirect_uris: ['https://post.example/cb'] })).json().client_secret as string
  await createClient(env, { client_id: 'spa-app', name: 'SPA', type: 'public', redirect_uris: ['https://spa.example/cb'] })
  return { env, oidc, web, post, spa: 'spa-app' }
}

async function refusal (oidc: OidcServices, request: { authorization?: string, body: Record<string, unknown> }, context = CONTEXT): Promise<unknown> {
  try {
    await oidc.clients.authenticate(request, context)
  } catch (err) {
    return err
  }
  return undefined
}

function invalidClient (t: Test, err: unknown, basicUsed: boolean, what: string): void {
  t.type(err, OAuthError, what)
  const e = err as OAuthError
  t.strictSame({ status: e.status, basic: e.basic, body: e.body() }, { status: 401, basic: basicUsed, body: { error: 'invalid_client', error_description: 'Client authentication failed' } }, what)
}

t.test('each client authenticates by its own method; every other way is 401 invalid_client', async (t) => {
  const { oidc, web, post } = await setup(t)
  t.equal((await oidc.clients.authenticate({ authorization: basic('web-app', web), body: {} }, CONTEXT)).clientId, 'web-app', 'basic')
  t.equal((await oidc.clients.authenticate({ authorization: basic('web-app', web), body: { client_id: 'web-app' } }, CONTEXT)).clientId, 'web-app', 'basic with the same client_id in the form')
  t.equal((await oidc.clients.authenticate({ body: { client_id: 'post-app', client_secret: post } }, CONTEXT)).clientId, 'post-app', 'post')
  t.equal((await oidc.clients.authenticate({ body: { client_id: 'spa-app' } }, CONTEXT)).clientId, 'spa-app', 'none, for a public client')
  t.equal((await oidc.clients.authenticate({ authorization: `bAsIc  ${basic('web-app', web).slice(6)}`, body: {} }, CONTEXT)).clientId, 'web-app', 'the scheme in any case')

  invalidClient(t, await refusal(oidc, { authorization: basic('web-app', `${web}x`), body: {} }), true, 'a wrong secret')
  invalidClient(t, await refusal(oidc, { authorization: basic('web-app', post), body: {} }), true, 'another client\'s secret')
  invalidClient(t, await refusal(oidc, { authorization: basic('nobody', web), body: {} }), true, 'an unknown client')
  invalidClient(t, await refusal(oidc, { body: { client_id: 'web-app', client_secret: web } }), false, 'post for a basic client')
  invalidClient(t, await refusal(oidc, { authorization: basic('post-app', post), body: {} }), true, 'basic for a post client')
  invalidClient(t, await refusal(oidc, { body: { client_id: 'web-app' } }), false, 'no secret for a confidential client')
  invalidClient(t, await refusal(oidc, { body: { client_id: 'spa-app', client_secret: 'anything' } }), false, 'a secret for a public client')
  invalidClient(t, await refusal(oidc, { body: {} }), false, 'no client at all')
  invalidClient(t, await refusal(oidc, { authorization: 'Basic !!!notbase64', body: {} }), true, 'a Basic header that does not decode')
  invalidClient(t, await refusal(oidc, { authorization: `Basic ${Buffer.from('no-colon').toString('base64')}`, body: {} }), true, 'no colon')
  invalidClient(t, await refusal(oidc, { authorization: `Basic ${Buffer.from('web-app:%zz').toString('base64')}`, body: {} }), true, 'a bad escape')
})

t.test('two methods at once, a second client_id or a repeated parameter is 400 invalid_request', async (t) => {
  const { oidc, web } = await setup(t)
  const cases: Array<[string, { authorization?: string, body: Record<string, unknown> }, string]> = [
    ['basic and a form secret', { authorization: basic('web-app', web), body: { client_secret: web } }, 'Use one client authentication method, not two'],
    ['another client_id in the form', { authorization: basic('web-app', web), body: { client_id: 'spa-app' } }, 'client_id differs from the one authenticated'],
    ['client_id twice', { body: { client_id: ['spa-app', 'spa-app'] } }, 'client_id must be sent once'],
    ['a Bearer header', { authorization: 'Bearer abc', body: {} }, 'Only HTTP Basic client authentication is accepted in the Authorization header']
  ]
  for (const [what, request, description] of cases) {
    const err = await refusal(oidc, request) as OAuthError
    t.type(err, OAuthError, what)
    t.strictSame({ status: err.status, body: err.body() }, { status: 400, body: { error: 'invalid_request', error_description: description } }, what)
  }
})

t.test('RFC 6749 §2.3.1: the id and secret are form-urlencoded inside Basic; undecoded, the same secret fails', async (t) => {
  const { oidc } = await setup(t)
  t.equal((await oidc.clients.authenticate({ authorization: basic('odd-secret', ODD_SECRET), body: {} }, CONTEXT)).clientId, 'odd-secret')
  invalidClient(t, await refusal(oidc, { authorization: rawBasic('odd-secret', ODD_SECRET), body: {} }), true, 'negative control: sent without the encoding')
})

t.test('a disabled client fails; a rotated secret stops at once, the new one works', async (t) => {
  const { env, oidc, web } = await setup(t)
  const rotated = await env.app.inject({ method: 'POST', url: '/api/oauth2/clients/web-app/rotate-secret', headers: env.admin })
  const fresh = rotated.json().client_secret as string
  invalidClient(t, await refusal(oidc, { authorization: basic('web-app', web), body: {} }), true, 'the old secret')
  t.equal((await oidc.clients.authenticate({ authorization: basic('web-app', fresh), body: {} }, CONTEXT)).clientId, 'web-app', 'the new secret')
  await env.app.inject({ method: 'PATCH', url: '/api/oauth2/clients/web-app', headers: env.admin, payload: { disabled: true } })
  invalidClient(t, await refusal(oidc, { authorization: basic('web-app', fresh), body: {} }), true, 'disabled')
  await env.app.inject({ method: 'PATCH', url: '/api/oauth2/clients/web-app', headers: env.admin, payload: { disabled: false } })
  t.equal((await oidc.clients.authenticate({ authorization: basic('web-app', fresh), body: {} }, CONTEXT)).clientId, 'web-app', 'enabled again')
})

t.test('failures count toward LOGIN_RATE_LIMIT with the sign-ins of the address: then 429, even with the right secret', async (t) => {
  const { env, oidc, web } = await setup(t, { LOGIN_RATE_LIMIT: '4/m' })
  const user = await createUser(env.app)
  const signIn = await env.app.inject({ method: 'POST', url: '/auth/login', remoteAddress: CONTEXT.ip, payload: { email: user.email, password: 'Wrong-Password-1' } })
  t.equal(signIn.statusCode, 401, 'one sign-in counted')
  for (let i = 0; i < 2; i++) invalidClient(t, await refusal(oidc, { authorization: basic('web-app', 'wrong'), body: {} }), true, `failure ${i + 1}`)
  t.equal((await oidc.clients.authenticate({ authorization: basic('web-app', web), body: {} }, CONTEXT)).clientId, 'web-app', 'a success is not counted')
  invalidClient(t, await refusal(oidc, { authorization: basic('web-app', 'wrong'), body: {} }), true, 'the fourth counted attempt')
  const limited = await refusal(oidc, { authorization: basic('web-app', web), body: {} })
  t.type(limited, RateLimited, 'over the limit: 429 before the credentials are looked at')
  t.ok((limited as RateLimited).retryAfter >= 1 && (limited as RateLimited).retryAfter <= 60)
  const login = await env.app.inject({ method: 'POST', url: '/auth/login', remoteAddress: CONTEXT.ip, payload: { email: user.email, password: user.password } })
  t.equal(login.statusCode, 429, 'the sign-ins of the address are limited by the same count')
  t.equal((await oidc.clients.authenticate({ authorization: basic('web-app', web), body: {} }, { ip: '198.51.100.8' })).clientId, 'web-app', 'control: another address is not')
})

t.test('an OIDC provider off has no services.oidc', async (t) => {
  const env = await oidcApp(t, { ENABLE_OIDC_PROVIDER: false })
  t.equal(env.app.services.oidc, undefined)
  t.ok(OIDC.ENABLE_OIDC_PROVIDER)
})
