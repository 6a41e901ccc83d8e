// Proves src/accounts/sign-in.ts.
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { authHeader, build, changePassword, createUser, login } from '../../helper.js'

const invalidCredentials = { error: 'Unauthorized', message: 'Invalid email or password', code: 'invalid_credentials' }

/**
 * Runs `change` once, after a sign-in has read the user and checked the password but before
 * its session is stored: the interleaving a concurrent change-password or demotion can take.
 */
function beforeNextSessionInsert (t: Test, app: FastifyInstance, change: () => Promise<void>): void {
  const sessions = app.store.sessions
  const insert = sessions.create.bind(sessions)
  let pending = true
  t.capture(sessions, 'create', async (...args: Parameters<typeof insert>) => {
    if (pending) {
      pending = false
      await change()
    }
    return await insert(...args)
  })
}

t.test('POST /auth/login with the password a concurrent change-password replaced is refused', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const changer = await login(app, user)
  beforeNextSessionInsert(t, app, async () => {
    const changed = await changePassword(app, changer.access_token, user.password, 'New-Password-2')
    t.equal(changed.statusCode, 200, 'the change went through between the check and the insert')
  })

  const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: user.password } })
  t.equal(res.statusCode, 401)
  t.strictSame(res.json(), invalidCredentials)
  const sessions = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: 'New-Password-2' } })
  t.equal(sessions.statusCode, 200, 'the new password signs in')
})

t.test('POST /auth/login of an admin demoted concurrently gets no admin token', async (t) => {
  const app = await build(t)
  const admin = await createUser(app, { roles: ['admin'] })
  const root = await login(app, await createUser(app, { roles: [], isSuperuser: true }))
  beforeNextSessionInsert(t, app, async () => {
    const demoted = await app.inject({ method: 'PUT', url: `/api/users/${admin.id}`, headers: authHeader(root.access_token), payload: { roles: ['user'] } })
    t.equal(demoted.statusCode, 200, 'the demotion went through between the check and the insert')
  })

  const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: admin.email, password: admin.password } })
  t.equal(res.statusCode, 401)
  t.strictSame(res.json(), invalidCredentials)
  const again = await login(app, admin)
  const promote = await app.inject({
    method: 'POST',
    url: '/api/users',
    headers: authHeader(again.access_token),
    payload: { email: 'new-admin@example.com', password: 'long-enough', name: 'New Admin', roles: ['admin'] }
  })
  t.equal(promote.statusCode, 403, 'signed in again, the demoted user is no admin')
})

t.test('POST /auth/login while another user changes their password is not affected', async (t) => {
  // the control: only a change to the signing-in user's own credentials refuses the sign-in
  const app = await build(t)
  const user = await createUser(app)
  const other = await createUser(app)
  const otherSession = await login(app, other)
  beforeNextSessionInsert(t, app, async () => {
    const changed = await changePassword(app, otherSession.access_token, other.password, 'New-Password-2')
    t.equal(changed.statusCode, 200)
  })
  const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: user.password } })
  t.equal(res.statusCode, 200)
  const me = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader((res.json() as { access_token: string }).access_token) })
  t.equal(me.statusCode, 200)
})
