// routes/api/identities.ts: the caller's connected accounts, listed and disconnected (src/accounts/identities.ts, src/accounts/credentials.ts)
import type { FastifyInstance } from 'fastify'
import type { OpenAPIV3_1 as OpenAPI } from 'openapi-types'
import { sql } from 'kysely'
import t from 'tap'
import { authHeader, build, claimsOf, createUser, login, rawSql } from '../../helper.js'
import { latestMail, queued, recoveryApp } from '../auth/recovery/support.js'
import { DATA_KEY, registerWith, testClock } from '../passkeys/support.js'
import { PORTAL_ORIGIN } from '../portal/support.js'
import { SoftAuthenticator } from '../../webauthn-authenticator.js'
import { IDENTITY_NOT_FOUND, idpValues, LAST_CREDENTIAL, linkIdentity, shown } from './identities-support.js'

async function call (app: FastifyInstance, method: 'GET' | 'DELETE', url: string, token: string, payload?: Record<string, unknown>) {
  return await app.inject({ method, url, headers: authHeader(token), ...(payload === undefined ? {} : { payload }) })
}

const withoutPassword = async (app: FastifyInstance, userId: string) => await rawSql(app.config, sql`update users set password_hash = '' where id = ${userId}`)

t.test('GET /api/auth/identities: the caller\'s own, oldest first, named as the providers file names them; a provider gone from the file by its id', async (t) => {
  const app = await build(t, idpValues(t))
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  const enterprise = await linkIdentity(app, user.id, 'ghe', { createdAt: '2026-01-01T00:00:00.000Z', lastLoginAt: '2026-01-05T10:00:00.000Z' })
  const retired = await linkIdentity(app, user.id, 'retired', { createdAt: '2026-01-03T00:00:00.000Z', email: null })
  const github = await linkIdentity(app, user.id, 'github', { createdAt: '2026-01-02T00:00:00.000Z' })
  const other = await createUser(app)
  const theirs = await linkIdentity(app, other.id, 'github')

  const res = await call(app, 'GET', '/api/auth/identities', token)
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  t.strictSame(res.json(), { data: [shown(enterprise, 'GitHub <Enterprise> & Co'), shown(github, 'GitHub'), shown(retired, 'retired')] })
  const { access_token: otherToken } = await login(app, other)
  t.strictSame((await call(app, 'GET', '/api/auth/identities', otherToken)).json(), { data: [shown(theirs, 'GitHub')] }, 'each sees their own')
  const none = await createUser(app)
  t.strictSame((await call(app, 'GET', '/api/auth/identities', (await login(app, none)).access_token)).json(), { data: [] })
  const anonymous = await app.inject({ method: 'GET', url: '/api/auth/identities' })
  t.strictSame([anonymous.statusCode, anonymous.json().code], [401, 'token_missing'])
})

t.test('DELETE /api/auth/identities/:id: recent authentication; 204; no session ends; a notice mail; audited idp_unlinked', async (t) => {
  const clock = testClock()
  const app = await recoveryApp(t, idpValues(t), undefined, { clock: clock.clock })
  const user = await createUser(app)
  const { access_token: token, refresh_token: refreshToken } = await login(app, user)
  const identity = await linkIdentity(app, user.id, 'github')
  const url = `/api/auth/identities/${identity.id}`

  clock.now = claimsOf(token).auth_time * 1000 + 301_000
  const stale = await call(app, 'DELETE', url, token, {})
  t.strictSame([stale.statusCode, stale.json()], [403, { error: 'Forbidden', message: 'Sign in again to make this change', code: 'reauth_required', reason: 'reauth_required' }])
  const noBody = await app.inject({ method: 'DELETE', url, headers: authHeader(token) })
  t.equal(noBody.statusCode, 403, 'no body at all: the same')
  const wrong = await call(app, 'DELETE', url, token, { password: 'Wrong-Password-1' })
  t.strictSame([wrong.statusCode, wrong.json()], [400, { error: 'Bad Request', message: 'The current password is incorrect', code: 'invalid_password' }])
  t.equal((await call(app, 'GET', '/api/auth/identities', token)).json().data.length, 1, 'nothing removed by the refusals')

  const before = (await queued(app, user.email)).length
  const removed = await call(app, 'DELETE', url, token, { password: user.password })
  t.equal(removed.statusCode, 204)
  t.equal(removed.body, '')
  t.strictSame((await call(app, 'GET', '/api/auth/identities', token)).json(), { data: [] }, 'gone; the access token still works')
  const refreshed = await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: refreshToken } })
  t.equal(refreshed.statusCode, 200, 'and the session refreshes: disconnecting revokes no session')
  t.equal((await queued(app, user.email)).length, before + 1)
  t.match((await latestMail(app, user.email)).text, /Your GitHub account was disconnected from your account: it no longer signs you in\./)
  await app.auditTrail.flush()
  const audit = await rawSql<{ outcome: string, actor_id: string, user_id: string, detail: string }>(app.config, sql`select outcome, actor_id, user_id, detail from audit_events where event = 'idp_unlinked'`)
  t.strictSame(audit, [{ outcome: 'success', actor_id: user.id, user_id: user.id, detail: 'idp:github' }])
  t.equal(await app.store.identities.findBySubject('github', identity.subject), undefined, 'the row is gone: the upstream account may be connected again')
})

t.test('DELETE /api/auth/identities/:id: another user\'s and an unknown id are one 404; a malformed id is 422', async (t) => {
  const app = await build(t, idpValues(t))
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  const other = await createUser(app)
  const theirs = await linkIdentity(app, other.id, 'github')
  for (const [what, id] of [['another user\'s', theirs.id], ['unknown', '00000000-0000-4000-8000-000000000000']] as const) {
    const res = await call(app, 'DELETE', `/api/auth/identities/${id}`, token, {})
    t.strictSame([res.statusCode, res.json()], [404, IDENTITY_NOT_FOUND], what)
  }
  const malformed = await call(app, 'DELETE', '/api/auth/identities/not-a-uuid', token, {})
  t.equal(malformed.statusCode, 422)
  t.equal(malformed.json().code, 'validation_failed')
  const unknownField = await call(app, 'DELETE', `/api/auth/identities/${theirs.id}`, token, { password: user.password, admin: true })
  t.equal(unknownField.statusCode, 422, 'the body takes only password')
  t.equal((await app.store.identities.listOf(other.id)).length, 1, 'theirs stays')
})

t.test('a user without a password keeps their last connected account (409 last_credential); with a password it goes', async (t) => {
  const app = await build(t, idpValues(t))
  const user = await createUser(app)
  const { access_token: token } = await login(app, user)
  const github = await linkIdentity(app, user.id, 'github')
  const retired = await linkIdentity(app, user.id, 'retired')
  await withoutPassword(app, user.id)
  const last = await call(app, 'DELETE', `/api/auth/identities/${github.id}`, token, {})
  t.strictSame([last.statusCode, last.json()], [409, LAST_CREDENTIAL], 'the identity of a provider gone from the file signs nobody in: it does not count')
  t.equal((await call(app, 'DELETE', `/api/auth/identities/${retired.id}`, token, {})).statusCode, 204, 'that one may go')
  t.strictSame((await app.store.identities.listOf(user.id)).map((i) => i.id), [github.id])

  const withPassword = await createUser(app)
  const mine = await linkIdentity(app, withPassword.id, 'github')
  const removed = await call(app, 'DELETE', `/api/auth/identities/${mine.id}`, (await login(app, withPassword)).access_token, {})
  t.equal(removed.statusCode, 204, 'negative control: the password remains')
})

t.test('without a password, one passkey and one connected account: either may go, not both, even both at once', async (t) => {
  const app = await build(t, idpValues(t, { ENABLE_PASSKEYS: true, DATA_ENCRYPTION_KEYS: DATA_KEY }))
  async function passwordlessWithBoth () {
    const user = await createUser(app)
    const { access_token: token } = await login(app, user)
    const registered = await registerWith(app, token, new SoftAuthenticator(PORTAL_ORIGIN))
    if (registered.statusCode !== 201) throw new Error(`register: ${registered.body}`)
    const identity = await linkIdentity(app, user.id, 'github')
    await withoutPassword(app, user.id)
    return { user, token, passkey: `/api/auth/passkeys/${(registered.json() as { id: string }).id}`, identity: `/api/auth/identities/${identity.id}` }
  }
  const first = await passwordlessWithBoth()
  t.equal((await call(app, 'DELETE', first.passkey, first.token, {})).statusCode, 204, 'the passkey goes')
  const thenIdentity = await call(app, 'DELETE', first.identity, first.token, {})
  t.strictSame([thenIdentity.statusCode, thenIdentity.json()], [409, LAST_CREDENTIAL], 'then the identity is the last')

  const second = await passwordlessWithBoth()
  t.equal((await call(app, 'DELETE', second.identity, second.token, {})).statusCode, 204, 'the identity goes')
  const thenPasskey = await call(app, 'DELETE', second.passkey, second.token, {})
  t.strictSame([thenPasskey.statusCode, thenPasskey.json()], [409, LAST_CREDENTIAL], 'then the passkey is the last')

  // the rule counts inside each removal's transaction, the user row locked: one of two at once wins
  for (let round = 0; round < 3; round++) {
    const both = await passwordlessWithBoth()
    const answers = await Promise.all([call(app, 'DELETE', both.passkey, both.token, {}), call(app, 'DELETE', both.identity, both.token, {})])
    t.strictSame(answers.map((r) => r.statusCode).sort(), [204, 409], `at once, round ${round + 1}`)
    const left = (await app.store.passkeys.countOf(both.user.id)) + (await app.store.identities.countOf(both.user.id))
    t.equal(left, 1, 'one credential is left')
  }
})

t.test('with ENABLE_IDP_LOGIN off, no identity route exists (404)', async (t) => {
  for (const values of [{}, { ENABLE_PORTAL: true, PUBLIC_URL: PORTAL_ORIGIN }]) {
    const app = await build(t, values)
    const admin = await createUser(app, { roles: ['admin'], isSuperuser: true })
    const { access_token: token } = await login(app, admin)
    const id = '00000000-0000-4000-8000-000000000000'
    for (const [method, url] of [['GET', '/api/auth/identities'], ['DELETE', `/api/auth/identities/${id}`], ['GET', `/api/users/${admin.id}/identities`], ['DELETE', `/api/users/${admin.id}/identities/${id}`]] as const) {
      const res = await call(app, method, url, token, method === 'GET' ? undefined : {})
      t.strictSame([res.statusCode, res.json().code], [404, 'not_found'], `${method} ${url}`)
    }
  }
})

t.test('with ENABLE_IDP_LOGIN /openapi.json lists the four identity routes, tagged, with named schemas (never /auth/idp/*); off, none', async (t) => {
  const app = await build(t, idpValues(t))
  const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenAPI.Document
  const paths = Object.keys(document.paths ?? {}).filter((path) => path.includes('identit') || path.includes('idp'))
  t.strictSame(paths, ['/api/auth/identities', '/api/auth/identities/{id}', '/api/users/{id}/identities', '/api/users/{id}/identities/{identity_id}'])
  const operation = (method: 'get' | 'delete', path: string) => document.paths?.[path]?.[method] as OpenAPI.OperationObject
  for (const [method, path] of [['get', paths[0]], ['delete', paths[1]], ['get', paths[2]], ['delete', paths[3]]] as const) {
    t.strictSame(operation(method, path ?? '').tags, ['identities'], `${method} ${path ?? ''}`)
  }
  const listed = (path: string) => (operation('get', path).responses?.['200'] as OpenAPI.ResponseObject).content?.['application/json']?.schema
  t.same(listed('/api/auth/identities'), { $ref: '#/components/schemas/IdentityList' })
  t.same(listed('/api/users/{id}/identities'), { $ref: '#/components/schemas/IdentityList' })
  t.same(Object.keys(operation('delete', '/api/auth/identities/{id}').responses ?? {}).sort(), ['204', '400', '401', '403', '404', '409', '413', '415', '422', '429', '500', '503'])
  t.same(document.tags?.find((tag) => tag.name === 'identities'), { name: 'identities', description: 'Accounts at external identity providers connected to a user\'s: listing, disconnecting (switched on)' })

  const off = (await (await build(t)).inject({ method: 'GET', url: '/openapi.json' })).json() as OpenAPI.Document
  t.strictSame(Object.keys(off.paths ?? {}).filter((path) => path.includes('identit')), [], 'off: no identity path')
  t.equal(off.components?.schemas?.Identity, undefined)
  t.equal(off.tags?.find((tag) => tag.name === 'identities'), undefined)
})
