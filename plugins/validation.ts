import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Ajv, type Options } from 'ajv'
import addFormats from 'ajv-formats'
import { addRules } from '../src/validation/index.js'

/**
 * Ajv's options, decided on purpose (docs/validation.md): every error is reported (every string
 * and array is bounded, so that stays cheap, and ajv-errors' `errorMessage` overrides require
 * it), unknown body properties are refused rather than stripped, and types are coerced in the
 * query string and path only, never in a body. Unknown query parameters are dropped before the
 * handler sees them: caches and clients add their own (`?_=123`), and a URL's extras change
 * nothing a body's would.
 */
export default fp(async function validationPlugin (fastify: FastifyInstance) {
  const base: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: true, strictTypes: false }
  // the routes compile after the services exist: a new password is then checked against BREACHED_PASSWORDS_FILE
  const breached = () => fastify.hasDecorator('services') ? fastify.services.breachedPasswords : undefined
  const build = (options: Options) => addRules(addFormats.default(new Ajv({ ...base, ...options }), ['uuid', 'date-time', 'uri']), breached)
  const bodies = build({ coerceTypes: false })
  const strings = build({ coerceTypes: true, removeAdditional: true })
  fastify.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodies : strings).compile(schema))

  // an absent body is validated as {}, so its required fields are reported by name
  fastify.addHook('onRoute', (route) => {
    if (route.schema?.body === undefined) return
    const existing = route.preValidation === undefined ? [] : [route.preValidation].flat()
    route.preValidation = [(request, _reply, done) => { request.body ??= {}; done() }, ...existing]
  })
}, { name: 'validation' })
