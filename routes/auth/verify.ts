import proxyAddr from '@fastify/proxy-addr'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, FastifySchema, onRequestHookHandler, onSendHookHandler } from 'fastify'
import { errorResponses } from '../../schemas/errors.js'
import { IdentityHeaders, ROLES_MAX_LENGTH, VerifyQuery } from '../../schemas/verify.js'
import type { Config } from '../../src/config/config.js'
import { Forbidden, TokenMissing, ValidationFailed } from '../../src/errors.js'
import {
  forwardedUrl, holdsAnyRole, isNavigation, listedRoles, noRoleRequired, originalMethod, VERIFY_MODES, type VerifyMode
} from '../../src/http/forward-auth.js'
import { forbiddenPage } from '../../src/portal/forbidden-page.js'
import { checkReturnUrl } from '../../src/portal/return-url.js'
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
  'state, the Origin (or Referer) must be this service or one of CORS_ORIGINS, else 403 csrf_rejected. With ' +
  'FORWARD_AUTH_REDIRECT=true, a browser navigation without a valid token is sent to the sign-in page (see `mode`), and one ' +
  'lacking the roles gets the 403 as an HTML page.'

/** The one roles rule: unset or empty asks nothing, else one of the listed roles (a superuser passes). */
function meetsRoles (claims: Claims, roles: unknown): boolean {
  if (roles === undefined || claims.is_superuser) return true
  if (typeof roles !== 'string') throw new ValidationFailed({ roles: ['The roles field is invalid'] })
  if (roles.length > ROLES_MAX_LENGTH) throw new ValidationFailed({ roles: [`The roles field must not exceed ${ROLES_MAX_LENGTH} characters`] })
  return noRoleRequired(roles) || holdsAnyRole(claims.roles, roles)
}

/** `mode` (read only with FORWARD_AUTH_REDIRECT on): unset is forward_auth; a value given twice or unknown is a configuration mistake. */
function modeOf (mode: unknown): VerifyMode {
  if (mode === undefined) return 'forward_auth'
  if (VERIFY_MODES.includes(mode as VerifyMode)) return mode as VerifyMode
  throw new ValidationFailed({ mode: [`The mode field must be one of: ${VERIFY_MODES.join(', ')}`] })
}

/**
 * Whether the peer at `address` is one of TRUST_PROXY's proxies: the same test Fastify makes before
 * it reads X-Forwarded-For, -Proto and -Host (src/app.ts passes it the setting), with the same
 * library, so the two never disagree. A hop count trusts every peer; `false` none.
 */
function peerTrust (trustProxy: false | number | string): (address: string | undefined) => boolean {
  if (trustProxy === false) return () => false
  if (typeof trustProxy === 'number') return () => trustProxy > 0
  const trusts = proxyAddr.compile(trustProxy.split(',').map((entry) => entry.trim()))
  return (address) => address !== undefined && trusts(address, 0)
}

/**
 * FORWARD_AUTH_REDIRECT (docs/proxies.md#sending-browsers-to-the-sign-in-page): an onSend hook of
 * the route, so it runs for error answers only (a 200 is written in onRequest and never reaches
 * it), after the one error handler has answered, logged and audited as for any client. For a
 * browser navigation, a 401 becomes the way to the sign-in page when the request's URL, read from
 * a TRUST_PROXY peer's X-Forwarded-* headers, passes the return-URL rule (else it stays as it
 * is), and a missing role's 403 becomes the forbidden page; every other answer is left alone.
 */
function browserAnswers (portal: NonNullable<Config['portal']>, config: Config): onSendHookHandler {
  const trusted = peerTrust(config.trustProxy)
  const login = `${portal.publicUrl}/portal/login?rd=`
  const page = forbiddenPage(portal)

  function targetOf (request: FastifyRequest): string | undefined {
    const forwarded = trusted(request.socket.remoteAddress) ? forwardedUrl(request.headers) : undefined
    return forwarded === undefined ? undefined : checkReturnUrl(forwarded, portal)
  }

  /** The page for a missing role; a csrf_rejected 403 keeps its body. The body says which roles, as AUTHZ_DENIAL_DETAILS allows. */
  function forbidden (request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
    // always the one error handler's JSON here (every failure of this route goes through it)
    const body = JSON.parse(String(payload)) as { code?: string, required_roles?: string[] }
    if (body.code !== 'forbidden') return payload
    const { headers, html } = page({ email: request.claims?.email, requiredRoles: body.required_roles, target: targetOf(request) })
    reply.headers(headers)
    return html
  }

  return function (request, reply, payload, done) {
    const status = reply.statusCode
    if ((status !== 401 && status !== 403) || !isNavigation(request.headers)) {
      done(null, payload)
      return
    }
    if (status === 403) {
      done(null, forbidden(request, reply, payload))
      return
    }
    const target = targetOf(request)
    if (target === undefined) {
      done(null, payload)
      return
    }
    reply.header('location', login + encodeURIComponent(target))
    // nginx's auth_request passes on only 2xx, 401 and 403: the 401 keeps its body, and the proxy redirects to its Location
    if (modeOf((request.query as Record<string, unknown>).mode) === 'auth_request') {
      done(null, payload)
      return
    }
    const method = originalMethod(request.headers, request.method)
    reply.removeHeader('www-authenticate').removeHeader('content-type')
    reply.code(method === 'GET' || method === 'HEAD' ? 302 : 303)
    done(null, '')
  }
}

/** GET (and every other method) /auth/verify: docs/proxies.md. */
const verifyRoutes: FastifyPluginAsync = async (fastify) => {
  const { verifiedClaimsOf, keyClaimsOf, securityHeaders, config } = fastify
  const redirect = config.portal?.forwardAuthRedirect === true ? browserAnswers(config.portal, config) : undefined
  // an error body may reach a browser (Caddy and Traefik pass it on): it gets the API's headers
  const errorHeaders = { ...securityHeaders, 'cache-control': 'no-store' }

  // the whole answer in onRequest: nothing after it runs, so no body is read (nor refused with 413/415)
  // and no validator runs; callback style, no promise per request
  const verify: onRequestHookHandler = function (request, reply, done) {
    let claims: Claims | Promise<Claims> | undefined
    try {
      if (redirect !== undefined) modeOf((request.query as Record<string, unknown>).mode)
      // an API key as Bearer (docs/api-keys.md), else the access token as ever
      claims = keyClaimsOf(request) ?? verifiedClaimsOf(request, originalMethod(request.headers, request.method))
    } catch (err) {
      reply.headers(errorHeaders)
      done(err as Error)
      return
    }
    if (claims instanceof Promise) {
      claims.then((c) => { answer(request, reply, done, c) }, (err: Error) => { answer(request, reply, done, undefined, err) })
    } else {
      answer(request, reply, done, claims)
    }
  }

  function answer (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void, claims: Claims | undefined, failure?: Error): void {
    try {
      if (failure !== undefined) throw failure
      if (claims === undefined) throw new TokenMissing()
      const roles = (request.query as Record<string, unknown>).roles
      // only a failed check splits the list: the 403 names the roles asked for
      if (!meetsRoles(claims, roles)) {
        // who was refused: the audit event names them, and so does the forbidden page
        request.claims = claims
        throw new Forbidden('missing_role', listedRoles(roles as string))
      }
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
      ...errorResponses(401, 403, 422),
      // an API key beyond API_KEY_RATE_LIMIT (docs/api-keys.md)
      ...(config.apiKeys?.rateLimit !== undefined && errorResponses(429))
    }
  }
  // no CORS: a proxy calls this route, never a browser's script, and @fastify/cors would answer an
  // OPTIONS preflight itself (204) before the token is checked
  const route = {
    url: '/verify',
    config: { cors: false, securityHeaders: false, readsNoBody: true },
    onRequest: verify,
    ...(redirect !== undefined && { onSend: redirect }),
    handler: async () => { throw new Error('answered in onRequest') }
  }
  fastify.route({ ...route, method: METHODS, schema })
  fastify.route({ ...route, method: 'QUERY', schema: { ...schema, hide: true } })
}

export default verifyRoutes
