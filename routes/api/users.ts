import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { IdParams, ref } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/errors.js'
import { AdminCreateUserRequest, UpdateUserRequest, UserListQuery, UserListResponse, UserResponse } from '../../schemas/users.js'
import { UserListQueryWithKind } from '../../schemas/api-keys.js'
import type { UserKind } from '../../src/db/users.js'
import { NotFound } from '../../src/errors.js'
import { paginationMeta } from '../../src/http/pagination.js'
import { assertMayGrant } from '../../src/accounts/users.js'
import { userRepresentation } from '../../src/http/presenters.js'
import { callerOf } from '../../src/http/caller.js'

const SECURED: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { cookieAuth: [] }]
// every response here but DELETE's empty 204 holds user data
const ADMIN = { access: { roles: ['admin'] }, noStore: true }
const ADMIN_OR_SELF = { access: { roles: ['admin'], self: 'id' }, noStore: true }

/** /api/users: user management (docs/api.md#routes). The guard has checked the token and the declared access. */
const userRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { users } = fastify.services

  fastify.get('/', {
    schema: {
      tags: ['users'],
      summary: 'List users, oldest first',
      security: SECURED,
      // `kind` only while ENABLE_API_KEYS is on; off, it is an unknown field (422) as before
      querystring: fastify.services.apiKeys === undefined ? UserListQuery : UserListQueryWithKind,
      response: { 200: ref(UserListResponse), ...errorResponses(401, 403, 422, 500) }
    },
    config: ADMIN
  }, async (request) => {
    const { page, per_page: perPage, kind } = request.query as UserListQuery & { kind?: UserKind }
    const { users: list, total } = await users.list(page, perPage, kind)
    return { data: list.map(userRepresentation), pagination: paginationMeta(page, perPage, total) }
  })

  fastify.post('/', {
    schema: {
      tags: ['users'],
      summary: 'Create a user',
      security: SECURED,
      body: AdminCreateUserRequest,
      response: { 201: ref(UserResponse, { headers: { Location: Type.String({ description: 'The new user: /api/users/{id}' }) } }), ...errorResponses(400, 401, 403, 415, 422) }
    },
    config: ADMIN
  }, async (request, reply) => {
    const { roles, is_superuser: isSuperuser, ...account } = request.body
    const caller = callerOf(request)
    assertMayGrant(caller, { roles, isSuperuser })
    const requester = { actorId: caller.user_id, context: { ip: request.ip } }
    const user = await users.create({ ...account, roles: roles ?? fastify.config.defaultRoles, isSuperuser: isSuperuser ?? false }, requester)
    return reply.code(201).header('location', `/api/users/${user.id}`).send(userRepresentation(user))
  })

  fastify.get('/:id', {
    schema: {
      tags: ['users'],
      summary: 'One user',
      security: SECURED,
      params: IdParams,
      response: { 200: ref(UserResponse), ...errorResponses(401, 403, 404, 422) }
    },
    config: ADMIN_OR_SELF
  }, async (request) => {
    const user = await users.findById(request.params.id)
    if (user === undefined) throw new NotFound('User not found')
    return userRepresentation(user)
  })

  fastify.put('/:id', {
    schema: {
      tags: ['users'],
      summary: 'Update a user (roles from an admin, is_superuser from a superuser)',
      security: SECURED,
      params: IdParams,
      body: UpdateUserRequest,
      response: { 200: ref(UserResponse), ...errorResponses(401, 403, 404, 415, 422) }
    },
    config: ADMIN_OR_SELF
  }, async (request) => {
    const { name, age, roles, is_superuser: isSuperuser } = request.body
    const caller = callerOf(request)
    assertMayGrant(caller, { roles, isSuperuser })
    const user = await users.update(request.params.id, { name, age, roles, isSuperuser }, caller, { ip: request.ip })
    return userRepresentation(user)
  })

  fastify.delete('/:id', {
    schema: {
      tags: ['users'],
      summary: 'Delete a user and end their sessions',
      security: SECURED,
      params: IdParams,
      response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(401, 403, 404, 422) }
    },
    config: ADMIN
  }, async (request, reply) => {
    await users.delete(request.params.id, callerOf(request), { ip: request.ip })
    return reply.code(204).send()
  })
}

export default userRoutes
