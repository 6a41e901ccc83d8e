import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { IdParams, ref, SetCookie } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/errors.js'
import { RevokedSessions, SessionListResponse, type SessionResponse } from '../../schemas/sessions.js'
import { adminTarget } from '../../src/http/access.js'
import { sessionRepresentation } from '../../src/http/presenters.js'
import type { OidcServices } from '../../src/oidc/provider.js'
import type { SessionView } from '../../src/sessions/session-service.js'
import type { Claims } from '../../src/tokens/claims.js'
import { callerOf } from '../../src/http/caller.js'

const SECURED: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { cookieAuth: [] }]
const ADMIN = { access: { roles: ['admin'] }, noStore: true }

/** With the OpenID Connect provider on: the names of the clients of the child sessions listed. */
async function clientNamesOf (oidc: OidcServices | undefined, views: SessionView[]): Promise<Map<string, string> | undefined> {
  if (oidc === undefined) return undefined
  const names = new Map<string, string>()
  for (const id of new Set(views.map((v) => v.clientId))) {
    const client = id === null ? undefined : await oidc.clients.find(id)
    if (client !== undefined) names.set(client.clientId, client.name)
  }
  return names
}

async function listed (fastify: FastifyInstance, userId: string, currentId?: string): Promise<SessionResponse[]> {
  const views = await fastify.services.sessions.list(userId)
  const names = await clientNamesOf(fastify.services.oidc, views)
  return views.map((s) => sessionRepresentation(s, currentId, names))
}

/** /api/auth/sessions: the signed-in user's own sessions (docs/api.md#sessions). The guard has checked the token. */
export const ownSessionRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { sessions } = fastify.services

  fastify.get('/', {
    schema: {
      tags: ['sessions'],
      summary: 'The caller\'s live sessions, newest first (never a token)',
      security: SECURED,
      response: { 200: ref(SessionListResponse), ...errorResponses(401) }
    },
    config: { noStore: true }
  }, async (request) => {
    const caller = callerOf(request)
    return { data: await listed(fastify, caller.user_id, caller.session_id) }
  })

  fastify.delete('/:id', {
    schema: {
      tags: ['sessions'],
      summary: 'End one of the caller\'s sessions (the current one: as a logout, both cookies cleared)',
      description: 'Another user\'s session, one already ended and an unknown id all answer 404 alike.',
      security: SECURED,
      params: IdParams,
      response: {
        204: { type: 'null', description: 'Ended', headers: { 'Set-Cookie': SetCookie('When it was the current session, both cookies, cleared') } },
        ...errorResponses(401, 403, 404, 422)
      }
    }
  }, async (request, reply) => {
    const caller = callerOf(request)
    const current = request.params.id === caller.session_id
    await sessions.revokeOwn(caller.user_id, request.params.id, { reason: current ? 'logout_local' : 'session_ended', actorId: caller.user_id }, { ip: request.ip })
    if (current) reply.clearAuthCookies()
    return reply.code(204).send()
  })

  fastify.delete('/', {
    schema: {
      tags: ['sessions'],
      summary: 'End every other session of the caller',
      security: SECURED,
      response: { 200: ref(RevokedSessions), ...errorResponses(401, 403) }
    },
    config: { noStore: true }
  }, async (request) => {
    const caller = callerOf(request)
    const revoked = await sessions.revoke({ userId: caller.user_id, exceptSessionId: caller.session_id }, { reason: 'logout_others', actorId: caller.user_id }, { ip: request.ip })
    return { revoked }
  })
}

/** /api/users/:id/sessions: one user's sessions, for admins; a superuser's only for a superuser. */
export const userSessionRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { sessions, users } = fastify.services

  const ownerOf = async (id: string, caller: Claims) => adminTarget(await users.findById(id), caller).id

  fastify.get('/:id/sessions', {
    schema: {
      tags: ['sessions'],
      summary: 'A user\'s live sessions, newest first (never a token)',
      security: SECURED,
      params: IdParams,
      response: { 200: ref(SessionListResponse), ...errorResponses(401, 403, 404, 422) }
    },
    config: ADMIN
  }, async (request) => {
    const userId = await ownerOf(request.params.id, callerOf(request))
    return { data: await listed(fastify, userId) }
  })

  fastify.delete('/:id/sessions', {
    schema: {
      tags: ['sessions'],
      summary: 'End every session of a user',
      security: SECURED,
      params: IdParams,
      response: { 200: ref(RevokedSessions), ...errorResponses(401, 403, 404, 422) }
    },
    config: ADMIN
  }, async (request) => {
    const userId = await ownerOf(request.params.id, callerOf(request))
    const revoked = await sessions.revoke({ userId }, { reason: 'admin_revoked', actorId: callerOf(request).user_id }, { ip: request.ip })
    return { revoked }
  })
}
