import fastifyJwt from '@fastify/jwt'
import Fastify from 'fastify'
import { openUsers, peerEnv } from './peer-db.js'

/**
 * A minimal hand-written peer of gatehouse's GET /api/users/:id: Fastify + @fastify/jwt (HS256)
 * + better-sqlite3, one route that verifies the bearer token and reads one row by primary key.
 * No security headers, no access rule, no logging: less than gatehouse does, on purpose.
 */
const { port, secret, dbFile, userId } = peerEnv()
const readUser = openUsers(dbFile, userId)
const app = Fastify({ logger: false })
await app.register(fastifyJwt, { secret, verify: { algorithms: ['HS256'] } })

app.addHook('onRequest', async (request, reply) => {
  try {
    await request.jwtVerify()
  } catch {
    return await reply.code(401).send({ error: 'unauthorized' })
  }
})

const user = {
  type: 'object',
  properties: { id: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' }, roles: { type: 'array', items: { type: 'string' } }, created_at: { type: 'string' } }
} as const

app.get<{ Params: { id: string } }>('/users/:id', { schema: { response: { 200: user } } }, async (request, reply) => {
  const found = readUser(request.params.id)
  return found ?? await reply.code(404).send({ error: 'not found' })
})

process.once('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
await app.listen({ host: '127.0.0.1', port })
