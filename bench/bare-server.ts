import Fastify from 'fastify'

/**
 * The ceiling: Fastify's hello world as fastify/benchmarks runs it (logger off, one JSON route).
 * Listens on 127.0.0.1:$PORT and stops on SIGTERM.
 */
const app = Fastify({ logger: false })

app.get('/', async () => ({ hello: 'world' }))

process.once('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) })
