import fastifySwaggerUi from '@fastify/swagger-ui'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { DOCS_CSP } from '../plugins/security.js'

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
