import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { LogoutQuery, RefreshRequest, TokenResponse } from '../../schemas/auth.js'
import { ref, SetCookie } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/errors.js'
import { CreateUserRequest, UserResponse } from '../../schemas/users.js'
import { readAccessCredential, REFRESH_COOKIE } from '../../src/http/credentials.js'
import { RegistrationDisabled, TokenMissing, TokenRevoked, ValidationFailed } from '../../src/errors.js'
import type { Claims } from '../../src/tokens/claims.js'
import { toTokenResponse, userRepresentation } from '../../src/http/presenters.js'

/** /auth: refresh, logout, the current user and self-registration (docs/api.md#routes, #tokens-and-sessions). */
const sessionRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { config } = fastify
  const { sessions, users, auth } = fastify.services

  /** The refresh token from the body, else from the cookie (a cookie use must pass the CSRF rule). */
  function refreshTokenOf (request: FastifyRequest, body: RefreshRequest): { token: string, fromCookie: boolean } | undefined {
    const fromBody = body.refresh_token
    if (fromBody !== undefined) return { token: fromBody, fromCookie: false }
    const fromCookie = request.cookies[REFRESH_COOKIE]
    if (fromCookie === undefined) return undefined
    // docs/api.md#csrf: a request with a Bearer header is not subject to the check (no form can send one)
    if (readAccessCredential(request)?.source !== 'bearer') fastify.assertTrustedOrigin(request)
    return { token: fromCookie, fromCookie: true }
  }

  fastify.post('/refresh', {
    schema: {
      tags: ['auth'],
      summary: 'Rotate the refresh token and get a new pair',
      description: 'The refresh token comes in the body or, failing that, in the refresh_token cookie (which also needs a trusted Origin).',
      // the body is the other way to present it, hence the empty alternative
      security: [{ refreshCookie: [] }, {}],
      body: RefreshRequest,
      response: { 200: ref(TokenResponse, { headers: { 'Set-Cookie': SetCookie('When the refresh token came from the cookie, the new cookie pair') } }), ...errorResponses(400, 401, 403, 415, 422, 429) }
    },
    config: { rateLimit: fastify.rateLimits.refresh, noStore: true }
  }, async (request, reply) => {
    const presented = refreshTokenOf(request, request.body)
    if (presented === undefined) throw new ValidationFailed({ refresh_token: ['The refresh_token field is required'] })
    const pair = await sessions.refresh(presented.token, { ip: request.ip, userAgent: request.headers['user-agent'] })
    if (presented.fromCookie) reply.setAuthCookies(pair)
    return toTokenResponse(pair)
  })

  fastify.post('/logout', {
    schema: {
      tags: ['auth'],
      summary: 'Revoke this session (or the others, or all) and clear the cookies',
      description: 'The session is named by a refresh token (body or cookie) or an access token (bearer or cookie); ' +
        'scope=local without any signs nothing out and still clears the cookies.',
      security: [{ bearerAuth: [] }, { cookieAuth: [] }, { refreshCookie: [] }, {}],
      querystring: LogoutQuery,
      body: RefreshRequest,
      response: {
        204: { type: 'null', description: 'Signed out', headers: { 'Set-Cookie': SetCookie('Both cookies, cleared') } },
        ...errorResponses(400, 401, 403, 415, 422)
      }
    }
  }, async (request, reply) => {
    const scope = request.query.scope ?? 'local'
    let claims: Claims | undefined
    try {
      const presented = refreshTokenOf(request, request.body)
      claims = presented !== undefined ? sessions.verifyRefresh(presented.token) : fastify.verifiedClaimsOf(request)
    } catch (err) {
      // signing out of a session that is already over has succeeded
      if (!(err instanceof TokenRevoked && scope === 'local')) throw err
    }
    if (claims !== undefined) await sessions.logout(claims, scope, { ip: request.ip })
    else if (scope !== 'local') throw new TokenMissing()
    return reply.clearAuthCookies().code(204).send()
  })

  fastify.get('/me', {
    schema: {
      tags: ['auth'],
      summary: 'The signed-in user',
      security: [{ bearerAuth: [] }, { cookieAuth: [] }],
      response: { 200: ref(UserResponse), ...errorResponses(401) }
    },
    config: { noStore: true },
    // the /api hook, outside /api: no access declared, so any valid access token passes
    onRequest: fastify.authenticate
  }, async (request) => {
    const user = await users.findById(request.claims?.user_id ?? '')
    if (user === undefined) throw new TokenRevoked()
    return userRepresentation(user)
  })

  fastify.post('/register', {
    schema: {
      tags: ['auth'],
      summary: 'Create an account and sign in (only when ENABLE_REGISTER=true)',
      body: CreateUserRequest,
      response: { 201: ref(TokenResponse), ...errorResponses(400, 403, 415, 422, 429) }
    },
    config: { rateLimit: fastify.rateLimits.login, noStore: true },
    // refused before the body is read: disabled means 403 whatever the body
    onRequest: (_request, _reply, done) => { done(config.enableRegister ? undefined : new RegistrationDisabled()) }
  }, async (request, reply) => {
    const { email, password, name, age } = request.body
    const pair = await auth.register({ email, password, name, age, roles: config.defaultRoles }, { ip: request.ip, userAgent: request.headers['user-agent'] })
    return reply.code(201).send(toTokenResponse(pair))
  })
}

export default sessionRoutes
