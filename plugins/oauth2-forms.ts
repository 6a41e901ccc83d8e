import formbody from '@fastify/formbody'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { RateLimited } from '../src/errors.js'
import { OAuthError } from '../src/oidc/oauth-error.js'

const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i

/**
 * The token endpoints' surface (/oauth2/token, /revoke, /introspect): form bodies only (RFC 6749
 * §3.2), `Cache-Control: no-store` on every answer (§5.1), and every failure in RFC 6749 §5.2's
 * body `{error, error_description}` — the one deliberate exception to the ErrorResponse body,
 * shaped here alone. Registered inside their own scope (routes/oauth2/index.ts).
 */
export default fp(async function oauth2FormsPlugin (fastify: FastifyInstance) {
  fastify.removeAllContentTypeParsers()
  await fastify.register(formbody, { bodyLimit: fastify.config.bodyLimit })

  const onRequest: onRequestHookHandler = function (request, reply, done) {
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
    const type = request.headers['content-type']
    done(request.method === 'POST' && (type === undefined || !FORM_TYPE.test(type))
      ? new OAuthError('invalid_request', 'The body must be application/x-www-form-urlencoded.')
      : undefined)
  }
  fastify.addHook('onRequest', onRequest)

  fastify.setErrorHandler(async function (error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    let oauth: OAuthError
    if (error instanceof OAuthError) {
      oauth = error
    } else if (error instanceof RateLimited) {
      reply.header('retry-after', String(error.retryAfter))
      oauth = new OAuthError('invalid_request', 'Too many failed attempts: try again later.', { status: 429 })
    } else {
      const answer = fastify.errorAnswerOf(error, request)
      if (answer === undefined) request.log.error({ err: error }, 'request failed')
      oauth = answer === undefined || answer.status >= 500
        ? new OAuthError('server_error', 'The server could not answer the request.')
        : new OAuthError('invalid_request', answer.message, { status: answer.status === 413 ? 413 : 400 })
    }
    if (oauth.status < 500) request.log.info({ code: oauth.error }, 'request rejected')
    if (oauth.status === 401 && oauth.basic) reply.header('www-authenticate', 'Basic realm="gatehouse"')
    return await reply.code(oauth.status).send(oauth.body())
  })
}, { name: 'oauth2-forms', dependencies: ['config', 'error-handler'] })
