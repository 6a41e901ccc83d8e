import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { buildAjv } from '../src/validation/index.js'

/**
 * Ajv's options are src/validation's (buildAjv); types are coerced in the query string and path
 * only, never in a body. Unknown query parameters are dropped before the
 * handler sees them: caches and clients add their own (`?_=123`), and a URL's extras change
 * nothing a body's would.
 */
export default fp(async function validationPlugin (fastify: FastifyInstance) {
  // the routes compile after the services exist: a new password is then checked against BREACHED_PASSWORDS_FILE
  const breached = () => fastify.hasDecorator('services') ? fastify.services.breachedPasswords : undefined
  const bodies = buildAjv({ coerceTypes: false }, breached)
  const strings = buildAjv({ coerceTypes: true, removeAdditional: true }, breached)
  fastify.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodies : strings).compile(schema))

  // an absent body is validated as {}, so its required fields are reported by name
  fastify.addHook('onRoute', (route) => {
    if (route.schema?.body === undefined) return
    const existing = route.preValidation === undefined ? [] : [route.preValidation].flat()
    route.preValidation = [(request, _reply, done) => { request.body ??= {}; done() }, ...existing]
  })
}, { name: 'validation' })
