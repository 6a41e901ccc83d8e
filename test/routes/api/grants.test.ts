import t, { type Test } from 'tap'
import { authHeader, createUser, login } from '../../helper.js'
import type { OidcServices } from '../../../src/oidc/provider.js'
import { auditRows, createClient, oidcApp } from './oidc-support.js'

/* /api/auth/grants (routes/api/grants.ts, src/oidc/grants.ts): the apps a user authorized, and ending one. */

const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const CONTEXT = { ip: '127.0.0.1' }

async function setup (t: Test) {
  const env = await oidcApp(t)
  const oidc = env.app.services.oidc as OidcServices
  for (const [id, name] of [['web-app', 'Web app'], ['wiki', 'The wiki']]) {
    t.equal((await createClient(env, { client_id: id, name, type: 'confidential', redirect_uris: [`https://${id}.example/cb`] })).statusCode, 201)
  }
  const user = await createUser(env.app)
  const headers = authHeader((await login(env.app, user)).access_token)
  const revoked: Array<[string, string]> = []
  oidc.grants.onRevoke((userId, clientId) => { revoked.push([userId, clientId]) })
  const changes: Array<[string, string]> = []
  oidc.clients.onChange((clientId, change) => { changes.push([clientId, change]) })
  const list = async (h = headers) => await env.app.inject({ method: 'GET', url: '/api/auth/grants', headers: h })
  return { env, oidc, user, headers, revoked, changes, list }
}

t.test('a consent is recorded, listed with the client\'s name, widened by a later one, and covers what it holds', async (t) => {
  const { env, oidc, user, list } = await setup(t)
  t.strictSame((await list()).json(), { data: [] })
  await oidc.grants.record(user.id, 'web-app', ['openid', 'profile'], CONTEXT)
  t.ok(await oidc.grants.covering(user.id, 'web-app', ['openid']))
  t.ok(await oidc.grants.covering(user.id, 'web-app', ['profile', 'openid']))
  t.notOk(await oidc.grants.covering(user.id, 'web-app', ['openid', 'email']), 'a scope never consented to')
  t.notOk(await oidc.grants.covering(user.id, 'wiki', ['openid']), 'another client')
  await oidc.grants.record(user.id, 'web-app', ['email'], CONTEXT)
  t.ok(await oidc.grants.covering(user.id, 'web-app', ['openid', 'email', 'profile']), 'the scopes together')
  await oidc.grants.record(user.id, 'wiki', ['openid'], CONTEXT)

  const res = await list()
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-store')
  const data = (res.json() as { data: Array<Record<string, unknown>> }).data
  t.strictSame(data.map(({ granted_at: at, ...rest }) => { t.match(at, TIME); return rest }), [
    { client_id: 'web-app', client_name: 'Web app', scopes: ['openid', 'profile', 'email'] },
    { client_id: 'wiki', client_name: 'The wiki', scopes: ['openid'] }
  ])
  const granted = await auditRows(env, 'oidc_consent_granted')
  t.strictSame(granted.map((r) => [r.user_id, r.actor_id, r.detail, r.outcome]), [
    [user.id, user.id, 'wiki: openid', 'success'],
    [user.id, user.id, 'web-app: email', 'success'],
    [user.id, user.id, 'web-app: openid profile', 'success']
  ])
})

t.test('DELETE ends the consent and, through the hook, the child sessions; another user\'s grant stays', async (t) => {
  const { env, oidc, user, headers, revoked, list } = await setup(t)
  const other = await createUser(env.app)
  const otherHeaders = authHeader((await login(env.app, other)).access_token)
  await oidc.grants.record(user.id, 'web-app', ['openid'], CONTEXT)
  await oidc.grants.record(other.id, 'web-app', ['openid'], CONTEXT)
  const res = await env.app.inject({ method: 'DELETE', url: '/api/auth/grants/web-app', headers })
  t.equal(res.statusCode, 204)
  t.equal(res.body, '')
  t.strictSame(revoked, [[user.id, 'web-app']], 'the flow\'s hook heard it')
  t.strictSame((await list()).json(), { data: [] })
  t.equal(((await list(otherHeaders)).json() as { data: unknown[] }).data.length, 1, 'the other user\'s grant stays')
  t.notOk(await oidc.grants.covering(user.id, 'web-app', ['openid']), 'consent is asked again')
  t.match((await auditRows(env, 'oidc_grant_revoked'))[0], { event: 'oidc_grant_revoked', user_id: user.id, actor_id: user.id, detail: 'web-app' })

  // a client that needs no consent holds no grant: its sessions still end
  const again = await env.app.inject({ method: 'DELETE', url: '/api/auth/grants/wiki', headers })
  t.equal(again.statusCode, 204)
  t.strictSame(revoked, [[user.id, 'web-app'], [user.id, 'wiki']])
  const unknown = await env.app.inject({ method: 'DELETE', url: '/api/auth/grants/nobody', headers })
  t.equal(unknown.statusCode, 404)
  t.strictSame(unknown.json(), { error: 'Not Found', code: 'not_found', message: 'Grant not found' })
  t.equal(revoked.length, 2, 'no hook for an unknown client')
  const bad = await env.app.inject({ method: 'DELETE', url: `/api/auth/grants/${'x'.repeat(65)}`, headers })
  t.equal(bad.statusCode, 422)
})

t.test('deleting or disabling a client ends every user\'s grant of it and tells the flow\'s hook', async (t) => {
  const { env, oidc, user, changes, list } = await setup(t)
  await oidc.grants.record(user.id, 'web-app', ['openid'], CONTEXT)
  await oidc.grants.record(user.id, 'wiki', ['openid'], CONTEXT)
  t.equal((await env.app.inject({ method: 'PATCH', url: '/api/oauth2/clients/web-app', headers: env.admin, payload: { name: 'Renamed' } })).statusCode, 200)
  t.strictSame(changes, [], 'a change that does not disable tells nothing')
  t.equal((await env.app.inject({ method: 'PATCH', url: '/api/oauth2/clients/web-app', headers: env.admin, payload: { disabled: true } })).statusCode, 200)
  t.strictSame(changes, [['web-app', 'disabled']])
  t.match((await auditRows(env, 'oidc_client_updated'))[0], { detail: 'web-app: disabled' })
  t.equal((await env.app.inject({ method: 'DELETE', url: '/api/oauth2/clients/wiki', headers: env.admin })).statusCode, 204)
  t.strictSame(changes, [['web-app', 'disabled'], ['wiki', 'deleted']])
  t.strictSame((await list()).json(), { data: [] })
  t.equal((await oidc.clients.find('wiki')), undefined, 'gone from the registry at once')
  t.equal((await oidc.clients.find('web-app'))?.disabled, true, 'seen disabled at once')
})

t.test('a user\'s grants go with the user; the routes need an access token', async (t) => {
  const { env, oidc, user } = await setup(t)
  await oidc.grants.record(user.id, 'web-app', ['openid'], CONTEXT)
  t.equal((await env.app.inject({ method: 'DELETE', url: `/api/users/${user.id}`, headers: env.admin })).statusCode, 204)
  t.strictSame(await env.app.store.oauthGrants.listFor(user.id), [])
  t.equal((await env.app.inject({ method: 'GET', url: '/api/auth/grants' })).statusCode, 401)
  t.equal((await env.app.inject({ method: 'DELETE', url: '/api/auth/grants/web-app' })).statusCode, 401)
})
