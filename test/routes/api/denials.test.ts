// Proves src/http/access.ts and plugins/error-handler.ts.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { authHeader, build, createUser, login } from '../../helper.js'
import { CSRF_REJECTED, INSUFFICIENT_SCOPE, MISSING_ADMIN, NOT_OWNER, REGISTRATION_DISABLED, SUPERUSER_REQUIRED } from '../../patterns.js'

/*
 * Every 403 the service gives, each with its whole body and its challenge header
 * (docs/api.md#why-access-was-denied), with AUTHZ_DENIAL_DETAILS on (the default) and off.
 */

const METRICS_TOKEN = 'scrape-token-0123456789abcdef'
const UNKNOWN_ID = '0b7c2a52-3f7e-4c3a-9d55-2f1c8f0a6e11'

interface Case {
  name: string
  /** the route pattern the audit detail names */
  route: string
  reason: string
  body: Record<string, unknown>
  challenge: string | undefined
  request: (app: FastifyInstance, actors: Actors) => Promise<LightMyRequestResponse>
}

interface Actors { user: { id: string, token: string, cookie: string }, admin: { token: string }, boss: { id: string } }

async function actors (app: FastifyInstance): Promise<Actors> {
  const user = await createUser(app)
  const admin = await createUser(app, { roles: ['admin'] })
  const boss = await createUser(app, { roles: [], isSuperuser: true })
  const userSession = await login(app, user, { remember: true })
  return {
    user: { id: user.id, token: userSession.access_token, cookie: `access_token=${userSession.access_token}` },
    admin: { token: (await login(app, admin)).access_token },
    boss
  }
}

const CASES: Case[] = [
  {
    name: 'a route\'s roles missing (GET /api/users as a user)',
    route: 'GET /api/users',
    reason: 'missing_role',
    body: MISSING_ADMIN,
    challenge: INSUFFICIENT_SCOPE,
    request: async (app, { user }) => await app.inject({ method: 'GET', url: '/api/users', headers: authHeader(user.token) })
  },
  {
    name: 'a body granting roles the caller may not give (PUT /api/users/:id roles, by the user themself)',
    route: 'PUT /api/users/:id',
    reason: 'missing_role',
    body: MISSING_ADMIN,
    challenge: INSUFFICIENT_SCOPE,
    request: async (app, { user }) => await app.inject({ method: 'PUT', url: `/api/users/${user.id}`, headers: authHeader(user.token), payload: { roles: ['admin'] } })
  },
  {
    name: 'admin-or-self for someone else (GET /api/users/:id of another user)',
    route: 'GET /api/users/:id',
    reason: 'not_owner',
    body: NOT_OWNER,
    challenge: undefined,
    request: async (app, { user }) => await app.inject({ method: 'GET', url: `/api/users/${UNKNOWN_ID}`, headers: authHeader(user.token) })
  },
  {
    name: 'granting is_superuser without being one (POST /api/users as an admin)',
    route: 'POST /api/users',
    reason: 'superuser_required',
    body: SUPERUSER_REQUIRED,
    challenge: INSUFFICIENT_SCOPE,
    request: async (app, { admin }) => await app.inject({
      method: 'POST', url: '/api/users', headers: authHeader(admin.token), payload: { email: 'new@example.com', password: 'long-enough', name: 'New One', is_superuser: true }
    })
  },
  {
    name: 'changing a superuser\'s roles as an admin',
    route: 'PUT /api/users/:id',
    reason: 'superuser_required',
    body: SUPERUSER_REQUIRED,
    challenge: INSUFFICIENT_SCOPE,
    request: async (app, { admin, boss }) => await app.inject({ method: 'PUT', url: `/api/users/${boss.id}`, headers: authHeader(admin.token), payload: { roles: [] } })
  },
  {
    name: 'deleting a superuser as an admin',
    route: 'DELETE /api/users/:id',
    reason: 'superuser_required',
    body: SUPERUSER_REQUIRED,
    challenge: INSUFFICIENT_SCOPE,
    request: async (app, { admin, boss }) => await app.inject({ method: 'DELETE', url: `/api/users/${boss.id}`, headers: authHeader(admin.token) })
  },
  {
    name: 'a cookie-authenticated change from a foreign origin',
    route: 'PUT /api/users/:id',
    reason: 'csrf_rejected',
    body: CSRF_REJECTED,
    challenge: undefined,
    request: async (app, { user }) => await app.inject({ method: 'PUT', url: `/api/users/${user.id}`, headers: { cookie: user.cookie, origin: 'https://evil.example' }, payload: { name: 'Evil' } })
  },
  {
    name: 'registration while disabled',
    route: 'POST /auth/register',
    reason: 'registration_disabled',
    body: REGISTRATION_DISABLED,
    challenge: undefined,
    request: async (app) => await app.inject({ method: 'POST', url: '/auth/register', payload: { email: 'x@example.com', password: 'long-enough', name: 'Xavier' } })
  }
]

/** The counter samples of gatehouse_access_denied_total, by reason. */
async function deniedSamples (app: FastifyInstance): Promise<Record<string, number>> {
  const res = await app.inject({ method: 'GET', url: '/metrics', headers: authHeader(METRICS_TOKEN) })
  const samples: Record<string, number> = {}
  for (const match of res.body.matchAll(/^gatehouse_access_denied_total\{reason="([a-z_]+)"\} (\d+)$/gm)) samples[match[1] ?? ''] = Number(match[2])
  return samples
}

for (const details of [true, false]) {
  t.test(`every 403 carries its reason and the right challenge, AUTHZ_DENIAL_DETAILS=${details}`, async (t) => {
    const app = await build(t, { AUTHZ_DENIAL_DETAILS: details, METRICS_ENABLED: true, METRICS_TOKEN })
    const who = await actors(app)
    for (const c of CASES) {
      const res = await c.request(app, who)
      t.equal(res.statusCode, 403, c.name)
      const { required_roles: roles, ...withoutRoles } = c.body
      t.strictSame(res.json(), details ? c.body : withoutRoles, c.name)
      if (!details) t.notOk('required_roles' in res.json(), `${c.name}: no required_roles with details off`)
      else if (roles !== undefined) t.strictSame(res.json().required_roles, roles, `${c.name}: the roles that would pass`)
      t.equal(res.headers['www-authenticate'], c.challenge, `${c.name}: challenge`)
    }
  })
}

t.test('each denial is an access_denied audit event naming the reason and the route, and a metric by reason', async (t) => {
  const app = await build(t, { METRICS_ENABLED: true, METRICS_TOKEN })
  const who = await actors(app)
  const before = await deniedSamples(app)
  t.strictSame(before, { missing_role: 0, not_owner: 0, superuser_required: 0, session_required: 0, csrf_rejected: 0, registration_disabled: 0, mfa_required: 0, reauth_required: 0 }, 'every series exists from the start')
  for (const c of CASES) await c.request(app, who)
  t.strictSame(await deniedSamples(app), { missing_role: 2, not_owner: 1, superuser_required: 3, session_required: 0, csrf_rejected: 1, registration_disabled: 1, mfa_required: 0, reauth_required: 0 })

  const { entries } = await app.auditTrail.page({ event: 'access_denied' }, 1, 100)
  const details = entries.map((e) => e.detail).reverse()
  t.strictSame(details, CASES.map((c) => `${c.reason}: ${c.route}`))
  t.ok(entries.every((e) => e.outcome === 'failure'), 'a denial is a failure')
  const anonymous = entries.find((e) => e.detail?.startsWith('registration_disabled') === true)
  t.equal(anonymous?.actorId, null, 'an anonymous request has no actor')
  const byUser = entries.find((e) => e.detail === 'not_owner: GET /api/users/:id')
  t.equal(byUser?.actorId, who.user.id, 'the signed-in caller is the actor')

  // the negative control: an allowed request is no denial
  const own = await app.inject({ method: 'GET', url: `/api/users/${who.user.id}`, headers: authHeader(who.user.token) })
  t.equal(own.statusCode, 200)
  t.equal((await app.auditTrail.page({ event: 'access_denied' }, 1, 100)).total, CASES.length)
})

t.test('the OpenAPI description of a guarded route states its declared access', async (t) => {
  const app = await build(t)
  const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json()
  t.match(document.paths['/api/users'].get.description, /^Access: the role `admin` \(403 `missing_role` otherwise\), or a superuser\.$/)
  t.match(document.paths['/api/users/{id}'].get.description, /^Access: the user named by `id` themself, the role `admin` or a superuser \(403 `not_owner` otherwise\)\.$/)
  t.match(document.paths['/api/auth/change-password'].post.description, /^Access: any signed-in user\.$/)
  const reasons = document.components.schemas.ErrorResponse.properties.reason
  t.strictSame(reasons.enum, ['missing_role', 'not_owner', 'superuser_required', 'session_required', 'csrf_rejected', 'registration_disabled', 'mfa_required', 'reauth_required'])
})
