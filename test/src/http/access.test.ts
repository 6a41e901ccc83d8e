import t from 'tap'
import type { User } from '../../../src/db/users.js'
import { Forbidden, NotFound } from '../../../src/errors.js'
import { adminTarget, denialFor, describeAccess, type RouteAccess } from '../../../src/http/access.js'
import type { Claims } from '../../../src/tokens/claims.js'

/** true when the declared access lets these claims through */
const mayAccess = (who: Claims, access: RouteAccess | undefined, params: unknown) => denialFor(who, access, params) === undefined

function claims (overrides: Partial<Claims> = {}): Claims {
  const id = '11111111-1111-4111-8111-111111111111'
  return {
    user_id: id,
    sub: id,
    email: 'u@example.com',
    roles: ['user'],
    session_id: '22222222-2222-4222-8222-222222222222',
    is_superuser: false,
    type: 'access',
    iat: 0,
    exp: 0,
    iss: 'gatehouse',
    jti: '33333333-3333-4333-8333-333333333333',
    aal: 'aal1',
    amr: ['pwd'],
    auth_time: 0,
    ...overrides
  }
}

t.test('mayAccess decides every combination of declared roles, self and superuser', async (t) => {
  const user = claims()
  const admin = claims({ roles: ['user', 'admin'] })
  const superuser = claims({ is_superuser: true, roles: [] })
  const own = { id: user.user_id }
  const other = { id: '44444444-4444-4444-8444-444444444444' }
  const cases: [string, RouteAccess | undefined, Claims, unknown, boolean][] = [
    ['nothing declared: any signed-in user', undefined, user, other, true],
    ['an empty declaration: any signed-in user', {}, user, other, true],
    ['roles only: a holder of the role', { roles: ['admin'] }, admin, other, true],
    ['roles only: a user without it', { roles: ['admin'] }, user, other, false],
    ['roles only: a user without it, even on their own id', { roles: ['admin'] }, user, own, false],
    ['roles only: any one of several roles', { roles: ['auditor', 'user'] }, user, other, true],
    ['roles only, empty list: nobody but a superuser', { roles: [] }, admin, other, false],
    ['self only: the user themself', { self: 'id' }, user, own, true],
    ['self only: someone else', { self: 'id' }, user, other, false],
    ['self only: an admin is not the user', { self: 'id' }, admin, other, false],
    ['self only: the param is missing', { self: 'id' }, user, {}, false],
    ['roles and self: the role', { roles: ['admin'], self: 'id' }, admin, other, true],
    ['roles and self: the user themself', { roles: ['admin'], self: 'id' }, user, own, true],
    ['roles and self: neither', { roles: ['admin'], self: 'id' }, user, other, false],
    ['superuser: roles only', { roles: ['admin'] }, superuser, other, true],
    ['superuser: self only, someone else', { self: 'id' }, superuser, other, true],
    ['superuser: roles and self, someone else', { roles: ['admin'], self: 'id' }, superuser, other, true],
    ['superuser: an empty role list', { roles: [] }, superuser, other, true]
  ]
  for (const [name, access, who, params, expected] of cases) {
    t.equal(mayAccess(who, access, params), expected, name)
  }
})

t.test('denialFor names the reason a 403 carries, with the roles that would have passed', async (t) => {
  const user = claims()
  const other = { id: '44444444-4444-4444-8444-444444444444' }
  const reasonOf = (access: RouteAccess) => {
    const denied = denialFor(user, access, other)
    return denied === undefined ? undefined : { reason: denied.reason, requiredRoles: denied.requiredRoles }
  }
  t.same(reasonOf({ superuser: true }), { reason: 'superuser_required', requiredRoles: undefined })
  t.same(reasonOf({ roles: ['admin'], self: 'id' }), { reason: 'not_owner', requiredRoles: undefined })
  t.same(reasonOf({ roles: ['admin', 'auditor'] }), { reason: 'missing_role', requiredRoles: ['admin', 'auditor'] })
})

t.test('describeAccess words each declaration as the OpenAPI description shows it', async (t) => {
  t.equal(describeAccess(undefined), 'Access: any signed-in user.')
  t.equal(describeAccess({ superuser: true }), 'Access: a superuser (403 `superuser_required` otherwise).')
  t.equal(describeAccess({ roles: ['admin'] }), 'Access: the role `admin` (403 `missing_role` otherwise), or a superuser.')
  t.equal(describeAccess({ roles: ['admin', 'auditor'] }), 'Access: the roles `admin` or `auditor` (403 `missing_role` otherwise), or a superuser.')
  t.equal(describeAccess({ self: 'id' }), 'Access: the user named by `id` themself or a superuser (403 `not_owner` otherwise).')
  t.equal(describeAccess({ roles: ['admin'], self: 'id' }), 'Access: the user named by `id` themself, the role `admin` or a superuser (403 `not_owner` otherwise).')
})

t.test('adminTarget: an unknown user is 404; a superuser\'s account needs a superuser (403 superuser_required)', async (t) => {
  const account = (isSuperuser: boolean): User => ({
    id: '55555555-5555-4555-8555-555555555555', email: 'a@example.com', name: 'A', age: null, passwordHash: '', roles: ['user'], isSuperuser, credentialsVersion: 0, emailVerified: true, kind: 'user', createdAt: '', updatedAt: ''
  })
  const admin = claims({ roles: ['admin'] })
  t.throws(() => adminTarget(undefined, admin), new NotFound('User not found'))
  t.equal(adminTarget(account(false), admin).id, '55555555-5555-4555-8555-555555555555', 'an admin acts on a user')
  const refused = (() => { try { adminTarget(account(true), admin) } catch (err) { return err } })()
  t.ok(refused instanceof Forbidden)
  t.equal((refused as Forbidden).reason, 'superuser_required')
  t.equal(adminTarget(account(true), claims({ is_superuser: true })).isSuperuser, true, 'a superuser acts on a superuser')
})
