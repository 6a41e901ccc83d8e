import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AuditListQuery, AuditListResponse, type AuditEventResponse } from '../../schemas/audit.js'
import { ref } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/errors.js'
import type { AuditEntry } from '../../src/db/audit-events.js'
import { paginationMeta } from '../../src/http/pagination.js'

function toAuditEventResponse (entry: AuditEntry): AuditEventResponse {
  return {
    id: entry.id,
    at: entry.at,
    event: entry.event as AuditEventResponse['event'],
    outcome: entry.outcome as AuditEventResponse['outcome'],
    actor_id: entry.actorId,
    user_id: entry.userId,
    session_id: entry.sessionId,
    email: entry.email,
    address: entry.address,
    detail: entry.detail
  }
}

/** /api/audit: the persisted security events, for admins, paged like /api/users. */
const auditRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    schema: {
      tags: ['audit'],
      summary: 'List audit events, newest first, optionally of one user, one actor or one event',
      security: [{ bearerAuth: [] }, { cookieAuth: [] }],
      querystring: AuditListQuery,
      response: { 200: ref(AuditListResponse), ...errorResponses(401, 403, 422, 500) }
    },
    config: { access: { roles: ['admin'] }, noStore: true }
  }, async (request) => {
    const { page, per_page: perPage, user_id: userId, actor_id: actorId, event } = request.query
    const { entries, total } = await fastify.auditTrail.page({ userId, actorId, event }, page, perPage)
    return { data: entries.map(toAuditEventResponse), pagination: paginationMeta(page, perPage, total) }
  })
}

export default auditRoutes
