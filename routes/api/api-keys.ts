import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import {
  AdminCreateApiKeyRequest, ApiKeyList, ApiKeyParams, CreateApiKeyRequest, CreatedApiKey, CreateServiceAccountRequest, UserApiKeyParams
} from '../../schemas/api-keys.js'
import { IdParams, ref } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/errors.js'
import { UserResponse } from '../../schemas/users.js'
import type { ApiKeys } from '../../src/api-keys/index.js'
import type { ApiKey } from '../../src/db/api-keys.js'
import { adminTarget } from '../../src/http/access.js'
import { apiKeyRepresentation, userRepresentation } from '../../src/http/presenters.js'
import type { Claims } from '../../src/tokens/claims.js'
import { callerOf, contextOf } from '../../src/http/caller.js'

const SECURED: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { cookieAuth: [] }]
const ADMIN = { access: { roles: ['admin'] }, noStore: true }
const TAGS = ['api-keys']

const created = (result: { key: ApiKey, secret: string }) => ({ ...apiKeyRepresentation(result.key), key: result.secret })

export interface ApiKeyRouteOptions { apiKeys: ApiKeys }

/** /api/auth/api-keys: the caller's own keys (docs/api-keys.md). Inside /api/auth, so a key itself is refused here. */
export const ownApiKeyRoutes: FastifyPluginAsyncTypebox<ApiKeyRouteOptions> = async (fastify, { apiKeys: { service } }) => {
  fastify.post('/', {
    schema: {
      tags: TAGS,
      summary: 'Create an API key for the caller (shown once); needs recent authentication',
      description: 'A sign-in within REAUTH_MAX_AGE, or `password` in the body. `roles` (default: all of the caller\'s) must be roles ' +
        'the caller holds; `expires_at` (default: API_KEY_MAX_TTL from now) in the future and at most API_KEY_MAX_TTL away.',
      security: SECURED,
      body: CreateApiKeyRequest,
      response: { 201: ref(CreatedApiKey), ...errorResponses(400, 401, 403, 409, 415, 422) }
    },
    config: { noStore: true }
  }, async (request, reply) => {
    const { name, roles, expires_at: expiresAt, password } = request.body
    const result = await service.createOwn(callerOf(request), { name, roles, expiresAt, password }, contextOf(request))
    return reply.code(201).send(created(result))
  })

  fastify.get('/', {
    schema: {
      tags: TAGS,
      summary: 'The caller\'s live API keys, newest first (never a key)',
      security: SECURED,
      response: { 200: ref(ApiKeyList), ...errorResponses(401, 403) }
    },
    config: { noStore: true }
  }, async (request) => ({ data: (await service.list(callerOf(request).user_id)).map(apiKeyRepresentation) }))

  fastify.delete('/:id', {
    schema: {
      tags: TAGS,
      summary: 'Revoke one of the caller\'s API keys',
      description: 'Another user\'s key, one already ended and an unknown id all answer 404 alike. Every instance refuses the key within a second.',
      security: SECURED,
      params: ApiKeyParams,
      response: { 204: { type: 'null', description: 'Revoked' }, ...errorResponses(401, 403, 404, 422) }
    }
  }, async (request, reply) => {
    const caller = callerOf(request)
    await service.revoke(request.params.id, caller.user_id, 'revoked_by_owner', { actorId: caller.user_id, context: contextOf(request) })
    return reply.code(204).send()
  })
}

/** /api/users/:id/api-keys: one user's keys, for admins; a superuser's only for a superuser. */
export const userApiKeyRoutes: FastifyPluginAsyncTypebox<ApiKeyRouteOptions> = async (fastify, { apiKeys: { service } }) => {
  const { users } = fastify.services

  const ownerOf = async (id: string, caller: Claims) => adminTarget(await users.findById(id), caller).id

  fastify.get('/:id/api-keys', {
    schema: {
      tags: TAGS,
      summary: 'A user\'s live API keys, newest first (never a key)',
      security: SECURED,
      params: IdParams,
      response: { 200: ref(ApiKeyList), ...errorResponses(401, 403, 404, 422) }
    },
    config: ADMIN
  }, async (request) => ({ data: (await service.list(await ownerOf(request.params.id, callerOf(request)))).map(apiKeyRepresentation) }))

  fastify.post('/:id/api-keys', {
    schema: {
      tags: TAGS,
      summary: 'Create an API key for a service account (shown once)',
      description: 'Service accounts only: a person creates their own keys (409 not_service_account). `roles` must be the account\'s.',
      security: SECURED,
      params: IdParams,
      body: AdminCreateApiKeyRequest,
      response: { 201: ref(CreatedApiKey), ...errorResponses(401, 403, 404, 409, 415, 422) }
    },
    config: ADMIN
  }, async (request, reply) => {
    const { name, roles, expires_at: expiresAt } = request.body
    const result = await service.createFor(request.params.id, { name, roles, expiresAt }, { actorId: callerOf(request).user_id, context: contextOf(request) })
    return reply.code(201).send(created(result))
  })

  fastify.delete('/:id/api-keys/:key_id', {
    schema: {
      tags: TAGS,
      summary: 'Revoke one of a user\'s API keys',
      security: SECURED,
      params: UserApiKeyParams,
      response: { 204: { type: 'null', description: 'Revoked' }, ...errorResponses(401, 403, 404, 422) }
    },
    config: ADMIN
  }, async (request, reply) => {
    const caller = callerOf(request)
    const userId = await ownerOf(request.params.id, caller)
    await service.revoke(request.params.key_id, userId, 'revoked_by_admin', { actorId: caller.user_id, context: contextOf(request) })
    return reply.code(204).send()
  })
}

/** POST /api/service-accounts: a user of kind `service`, listed and managed under /api/users. */
export const serviceAccountRoutes: FastifyPluginAsyncTypebox<ApiKeyRouteOptions> = async (fastify, { apiKeys: { service } }) => {
  fastify.post('/', {
    schema: {
      tags: TAGS,
      summary: 'Create a service account',
      description: 'A user of kind `service`: no password and no sign-in, never a superuser, an email `<slug>.<id>@service.invalid` ' +
        'that is never mailed. `roles` default to DEFAULT_ROLES. Its API keys are made with POST /api/users/{id}/api-keys.',
      security: SECURED,
      body: CreateServiceAccountRequest,
      response: { 201: ref(UserResponse, { headers: { Location: Type.String({ description: 'The new account: /api/users/{id}' }) } }), ...errorResponses(401, 403, 415, 422) }
    },
    config: ADMIN
  }, async (request, reply) => {
    const user = await service.createServiceAccount(request.body.name, request.body.roles, { actorId: callerOf(request).user_id, context: contextOf(request) })
    return reply.code(201).header('location', `/api/users/${user.id}`).send(userRepresentation(user))
  })
}
