import { randomUUID } from 'node:crypto'
import Fastify from 'fastify'
// the plugins' types name the config decorator
import type {} from '../plugins/config.js'
import { NO_STORE } from '../plugins/no-store.js'
import { apiSecurityHeaders } from '../plugins/security.js'
import type { UserRow } from '../src/db/schema.js'
import { immediateUserRows } from '../src/db/sqlite.js'
import { openFloorDb } from './floor-db.js'

/**
 * The floor of the userinfo scenario (bench/scenarios.ts `userinfo-floor`): what GET
 * /oauth2/userinfo must do, hand-written in a bare Fastify route with nothing else — the token
 * looked up among kept verified tokens (FLOOR_TOKEN, as gatehouse keeps its own), the session's
 * revocation checked in memory, the user read fresh from gatehouse's own schema by gatehouse's own
 * batched statement (immediateUserRows: one read per event-loop turn), the claims answered with the same security
 * and no-store headers. No hooks, no logger, no CORS, no cookie parsing, no load shedding, no
 * response schema. Listens on 127.0.0.1:$PORT, stops on SIGTERM; FLOOR_DB and FLOOR_TOKEN come from
 * bench/oidc.ts `startUserinfoFloor`.
 */
const { FLOOR_DB: file, FLOOR_TOKEN: token } = process.env
if (file === undefined || token === undefined) throw new Error('FLOOR_DB and FLOOR_TOKEN are required')
const { db, userId } = await openFloorDb(file)
const usersByIds = immediateUserRows(db)
const tokens = new Map([[token, { sub: userId, session_id: randomUUID(), scope: 'openid email profile roles' }]])
const revoked = new Set<string>()
// what gatehouse in production sends with a userinfo answer
const headers = { ...apiSecurityHeaders(true), ...NO_STORE }
let queue: Array<{ id: string, resolve: (row: unknown) => void }> = []
/** The lookups of one turn share one statement, as src/db/users.ts batches them. */
async function load (id: string): Promise<unknown> {
  return await new Promise((resolve) => {
    if (queue.length === 0) {
      setImmediate(() => {
        const turn = queue
        queue = []
        const rows = new Map((usersByIds(turn.map((e) => e.id)) ?? []).map((r) => [r.id, r]))
        for (const e of turn) e.resolve(rows.get(e.id))
      })
    }
    queue.push({ id, resolve })
  })
}

const app = Fastify({ logger: false })
app.get('/', async () => ({ ok: true }))
app.get('/userinfo', async (request, reply) => {
  reply.headers(headers)
  const header = request.headers.authorization
  const claims = header?.startsWith('Bearer ') === true ? tokens.get(header.slice(7)) : undefined
  if (claims === undefined || revoked.has(claims.session_id)) return await reply.code(401).send({ error: 'invalid_token' })
  const user = await load(claims.sub) as UserRow | undefined
  if (user === undefined) return await reply.code(401).send({ error: 'invalid_token' })
  return { sub: user.id, email: user.email, email_verified: user.email_verified === 1, name: user.name, roles: JSON.parse(user.roles) as string[] }
})
process.once('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) })
