import fastifySwaggerUi from '@fastify/swagger-ui'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'

/**
 * The docs page's policy (GET /docs and its assets, set there by @fastify/swagger-ui's
 * `staticCSP`): Swagger UI runs from its own origin only — its bundle, stylesheet and the
 * initializer are files, its icons are `data:` SVGs in the CSS, and it fetches the document
 * from /docs/json. Nothing inline runs, nothing loads from elsewhere, and the page cannot be
 * framed or post a form anywhere. The one inline `<style>` is the Swagger logo's SVG, allowed
 * by its hash rather than with 'unsafe-inline'; when swagger-ui-dist changes that logo,
 * test/browser/docs.test.ts fails with Chromium's message naming the new hash.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join('; ')

/**
 * The contract, public and outside /api: GET /openapi.json, and GET /docs, Swagger UI served
 * from swagger-ui-dist in node_modules by @fastify/swagger-ui, so the page works offline and
 * loads nothing from another origin (no validator badge, no CDN).
 * @see https://github.com/fastify/fastify-swagger-ui
 */
const docsRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/openapi.json', {
    schema: {
      tags: ['docs'],
      summary: 'This OpenAPI 3.1 document',
      response: { 200: Type.Object({}, { additionalProperties: true, description: 'The OpenAPI 3.1 document of every route' }) }
    }
  }, async (request) => {
    const document = fastify.swagger()
    // without PUBLIC_URL the document names the origin it was fetched from, as generators expect a server
    return 'servers' in document ? document : { ...document, servers: [{ url: `${request.protocol}://${request.host}`, description: 'This service' }] }
  })

  await fastify.register(fastifySwaggerUi, {
    routePrefix: '/docs',
    validatorUrl: false,
    // replaces the API's `default-src 'none'` on the page's own routes only (an encapsulated onSend)
    staticCSP: DOCS_CSP,
    uiConfig: { deepLinking: true, tryItOutEnabled: false, displayOperationId: true },
    theme: { title: 'gatehouse API' }
  })
}

export default docsRoutes
