import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { ref } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/errors.js'
import { ClientIdParams, ClientList, ClientSecret, CreateClientRequest, CreatedClient, OidcClient, UpdateClientRequest } from '../../schemas/oidc-clients.js'
import type { OidcServices } from '../../src/oidc/provider.js'
import { clientBody } from '../../src/oidc/presenter.js'
import type { Changer } from '../../src/oidc/client-admin.js'

const SECURED: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { cookieAuth: [] }]
const SUPERUSER = { access: { superuser: true }, noStore: true } as const

const changerOf = (request: FastifyRequest): Changer => ({ context: { ip: request.ip, userAgent: request.headers['user-agent'] }, actorId: request.claims?.user_id })

/** /api/oauth2/clients: the OpenID Connect provider's clients, managed by a superuser (docs/oidc.md#clients). */
const oauth2ClientRoutes: FastifyPluginAsyncTypebox<{ oidc: OidcServices }> = async (fastify, { oidc }) => {
  const { admin, clients } = oidc
  const ttl = fastify.config.accessTtl
  const tags = ['oidc']

  fastify.get('/', {
    schema: { tags, summary: 'List the clients: OIDC_CLIENTS_FILE\'s, then the database\'s, oldest first', security: SECURED, response: { 200: ref(ClientList), ...errorResponses(401, 403) } },
    config: SUPERUSER
  }, async () => ({ data: (await clients.list()).map((client) => clientBody(client, ttl)) }))

  fastify.post('/', {
    schema: {
      tags,
      summary: 'Create a client; a confidential one\'s client_secret is shown this once',
      security: SECURED,
      body: CreateClientRequest,
      response: { 201: ref(CreatedClient, { headers: { Location: Type.String({ description: 'The new client: /api/oauth2/clients/{client_id}' }) } }), ...errorResponses(401, 403, 409, 415, 422) }
    },
    config: SUPERUSER
  }, async (request, reply) => {
    const { client, secret } = await admin.create(request.body, changerOf(request))
    const body = { ...clientBody(client, ttl), ...(secret !== undefined && { client_secret: secret }) }
    return reply.code(201).header('location', `/api/oauth2/clients/${client.clientId}`).send(body)
  })

  fastify.get('/:client_id', {
    schema: { tags, summary: 'One client', security: SECURED, params: ClientIdParams, response: { 200: ref(OidcClient), ...errorResponses(401, 403, 404, 422) } },
    config: SUPERUSER
  }, async (request) => clientBody(await admin.get(request.params.client_id), ttl))

  fastify.patch('/:client_id', {
    schema: {
      tags,
      summary: 'Change a client (not its id or type); disabling it ends its child sessions and grants',
      security: SECURED,
      params: ClientIdParams,
      body: UpdateClientRequest,
      response: { 200: ref(OidcClient), ...errorResponses(401, 403, 404, 409, 415, 422) }
    },
    config: SUPERUSER
  }, async (request) => clientBody(await admin.update(request.params.client_id, request.body, changerOf(request)), ttl))

  fastify.delete('/:client_id', {
    schema: {
      tags,
      summary: 'Delete a client: its child sessions and grants end',
      security: SECURED,
      params: ClientIdParams,
      response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(401, 403, 404, 409, 422) }
    },
    config: SUPERUSER
  }, async (request, reply) => {
    await admin.remove(request.params.client_id, changerOf(request))
    return reply.code(204).send()
  })

  fastify.post('/:client_id/rotate-secret', {
    schema: {
      tags,
      summary: 'A new secret, shown this once; the old one is refused at once',
      security: SECURED,
      params: ClientIdParams,
      response: { 200: ref(ClientSecret), ...errorResponses(401, 403, 404, 409, 422) }
    },
    config: SUPERUSER
  }, async (request) => ({ client_secret: await admin.rotateSecret(request.params.client_id, changerOf(request)) }))
}

export default oauth2ClientRoutes
