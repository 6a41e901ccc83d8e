import type { IncomingMessage, ServerResponse } from 'node:http'
import underPressure from '@fastify/under-pressure'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import helmet, { type HelmetOptions } from 'helmet'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * false: the route sets the security headers itself where they mean something (GET
     * /auth/verify: on its error answers, which a proxy may show a browser, not on the empty 200
     * only the proxy reads). Every other route gets them in onRequest.
     */
    securityHeaders?: boolean
  }
  interface FastifyInstance {
    /** The headers every API answer carries (helmet's, worked out once). */
    securityHeaders: Readonly<Record<string, string>>
  }
}

/**
 * helmet's headers for these options, worked out once. helmet writes the same headers for every
 * request unless a directive is a function of the request (none here: no nonces), so running it
 * once against a recording response gives exactly what it would write each time.
 * @fastify/helmet instead builds a helmet instance and re-reads the CSP directives on every
 * request, in two async hooks: 20–30 µs of CPU a request, more than a bare Fastify route costs
 * whole (bench/, README "Benchmark").
 */
export function helmetHeaders (options: Readonly<HelmetOptions>): Record<string, string> {
  const headers: Record<string, string> = {}
  const recorder = {
    setHeader (name: string, value: string | number) { headers[name.toLowerCase()] = String(value) },
    removeHeader (name: string) { Reflect.deleteProperty(headers, name.toLowerCase()) }
  }
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (err?: unknown) => { if (err) throw err })
  return headers
}

/** The API's security headers (below); HSTS in production only. */
export function apiSecurityHeaders (production: boolean): Record<string, string> {
  return helmetHeaders({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    crossOriginResourcePolicy: { policy: 'same-origin' },
    strictTransportSecurity: production ? { maxAge: 31536000, includeSubDomains: true } : false
  })
}

/**
 * Response headers for an API (OWASP REST Security cheat sheet): nothing may be framed,
 * sniffed or loaded by a response, so the CSP is `default-src 'none'` except where a route (the
 * docs page, through @fastify/swagger-ui's onSend) sets its own. Set in onRequest, so error
 * answers carry them too. And 503 + Retry-After instead of queueing when the event loop lags.
 * @see https://helmetjs.github.io/
 * @see https://github.com/fastify/under-pressure
 */
export default fp(async function securityPlugin (fastify: FastifyInstance) {
  const headers = apiSecurityHeaders(fastify.config.production)
  fastify.decorate('securityHeaders', headers)
  fastify.addHook('onRequest', (request, reply, done) => {
    if (request.routeOptions.config.securityHeaders !== false) reply.headers(headers)
    done()
  })
  await fastify.register(underPressure, {
    maxEventLoopDelay: fastify.config.maxEventLoopDelay,
    retryAfter: 10
  })
}, { name: 'security', dependencies: ['config'] })
