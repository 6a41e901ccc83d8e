import type { FastifyPluginAsync, FastifySchema, onRequestHookHandler } from 'fastify'
import { errorResponses } from '../../schemas/errors.js'
import { IdentityHeaders, ROLES_MAX_LENGTH, VerifyQuery } from '../../schemas/verify.js'
import { Forbidden, TokenMissing, ValidationFailed } from '../../src/errors.js'
import { holdsAnyRole, listedRoles, noRoleRequired, originalMethod } from '../../src/http/forward-auth.js'
import type { Claims } from '../../src/tokens/claims.js'

/**
 * Every method OpenAPI can name (HEAD is Fastify's automatic twin of GET, with the same hooks);
 * QUERY, the one other method Fastify knows, is answered too but cannot be documented.
 */
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE']

const DESCRIPTION = 'Forward authentication for a reverse proxy (nginx `auth_request`, Caddy `forward_auth`, Traefik `ForwardAuth`): ' +
  'the access token (Bearer header first, access_token cookie second) is checked as on /api, from memory, and a 200 carries the ' +
  'identity in X-Auth-* headers for the proxy to pass on. Every method answers the same and no body is read. When the token ' +
  'came from the cookie and the original method (X-Forwarded-Method, else X-Original-Method, else this request\'s) changes ' +
  'state, the Origin (or Referer) must be this service or one of CORS_ORIGINS, else 403 csrf_rejected.'

/** The one roles rule: unset or empty asks nothing, else one of the listed roles (a superuser passes). */
function meetsRoles (claims: Claims, roles: unknown): boolean {
  if (roles === undefined || claims.is_superuser) return true
  if (typeof roles !== 'string') throw new ValidationFailed({ roles: ['The roles field is invalid'] })
  if (roles.length > ROLES_MAX_LENGTH) throw new ValidationFailed({ roles: [`The roles field must not exceed ${ROLES_MAX_LENGTH} characters`] })
  return noRoleRequired(roles) || holdsAnyRole(claims.roles, roles)
}

/** GET (and every other method) /auth/verify: docs/proxies.md. */
const verifyRoutes: FastifyPluginAsync = async (fastify) => {
  const { verifiedClaimsOf, securityHeaders } = fastify
  // an error body may reach a browser (Caddy and Traefik pass it on): it gets the API's headers
  const errorHeaders = { ...securityHeaders, 'cache-control': 'no-store' }

  // the whole answer in onRequest: nothing after it runs, so no body is read (nor refused with 413/415)
  // and no validator runs; callback style, no promise per request
  const verify: onRequestHookHandler = function (request, reply, done) {
    try {
      const claims = verifiedClaimsOf(request, originalMethod(request.headers, request.method))
      if (claims === undefined) throw new TokenMissing()
      const roles = (request.query as Record<string, unknown>).roles
      // only a failed check splits the list: the 403 names the roles asked for
      if (!meetsRoles(claims, roles)) throw new Forbidden('missing_role', listedRoles(roles as string))
      // The empty 200 is read by the proxy only: no-store and the identity, written to Node's
      // response as one header list. Fastify's send path (onSend hooks, header bookkeeping, payload
      // checks) has nothing to do for an empty body and cost some 0.5 µs of this route's ~13 µs
      // (docs/benchmarks.md); onResponse hooks and the request log still run, since Fastify
      // listens for the response's end from routing on. Inside the try: a value Node refuses as a
      // header throws before anything is written, and is answered as any other error.
      reply.raw.writeHead(200, [
        'cache-control', 'no-store',
        'x-auth-user-id', claims.user_id,
        'x-auth-email', claims.email,
        'x-auth-roles', claims.roles.join(','),
        'x-auth-session-id', claims.session_id,
        'x-auth-superuser', claims.is_superuser ? 'true' : 'false',
        'content-length', '0'
      ])
    } catch (err) {
      reply.headers(errorHeaders)
      done(err as Error)
      return
    }
    reply.hijack()
    reply.raw.end()
  }

  const schema: FastifySchema = {
    tags: ['auth'],
    summary: 'Forward authentication: is this request signed in (and does it hold one of the roles)?',
    description: DESCRIPTION,
    security: [{ bearerAuth: [] as string[] }, { cookieAuth: [] as string[] }],
    querystring: VerifyQuery,
    response: {
      200: { type: 'null', description: 'Signed in (and holding one of the roles): an empty body, the identity in the headers', headers: IdentityHeaders },
      ...errorResponses(401, 403, 422)
    }
  }
  // no CORS: a proxy calls this route, never a browser's script, and @fastify/cors would answer an
  // OPTIONS preflight itself (204) before the token is checked
  const route = { url: '/verify', config: { cors: false, securityHeaders: false, readsNoBody: true }, onRequest: verify, handler: async () => { throw new Error('answered in onRequest') } }
  fastify.route({ ...route, method: METHODS, schema })
  fastify.route({ ...route, method: 'QUERY', schema: { ...schema, hide: true } })
}

export default verifyRoutes
