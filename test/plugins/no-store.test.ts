import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import noStorePlugin from '../../plugins/no-store.js'
import { buildBare, type TestContext } from '../helper.js'

/*
 * plugins/no-store.ts on a bare Fastify: a route that declares `config: { noStore: true }` answers
 * with Cache-Control: no-store and Pragma: no-cache, its errors too; every other route is untouched.
 */

async function noStoreApp (t: TestContext): Promise<FastifyInstance> {
  return await buildBare(t, [noStorePlugin], (app) => {
    app.get('/token', { config: { noStore: true } }, async () => ({ token: 'secret' }))
    app.get('/token-fails', { config: { noStore: true } }, async () => { throw Object.assign(new Error('nope'), { statusCode: 400 }) })
    // a hook the route brings itself still runs, after the plugin's
    app.get('/token-hooked', { config: { noStore: true }, onRequest: async (_request, reply) => { reply.header('x-own', 'hook') } }, async () => ({ ok: true }))
    app.get('/public', async () => ({ ok: true }))
  })
}

/** The answer's status, whether it carries the no-store pair, and its whole body. */
function expectAnswer (t: Test, res: LightMyRequestResponse, status: number, noStore: boolean, body: unknown): void {
  t.equal(res.statusCode, status)
  t.same([res.headers['cache-control'], res.headers.pragma], noStore ? ['no-store', 'no-cache'] : [undefined, undefined])
  t.same(res.json(), body)
}

t.test('a route declaring noStore answers with no-store and no-cache', async (t) => {
  const app = await noStoreApp(t)
  expectAnswer(t, await app.inject({ method: 'GET', url: '/token' }), 200, true, { token: 'secret' })
})

t.test('its error answers carry no-store too: the header is set before the handler runs', async (t) => {
  const app = await noStoreApp(t)
  expectAnswer(t, await app.inject({ method: 'GET', url: '/token-fails' }), 400, true, { statusCode: 400, error: 'Bad Request', message: 'nope' })
})

t.test('a route\'s own onRequest hook is kept beside the plugin\'s', async (t) => {
  const app = await noStoreApp(t)
  const res = await app.inject({ method: 'GET', url: '/token-hooked' })
  expectAnswer(t, res, 200, true, { ok: true })
  t.equal(res.headers['x-own'], 'hook')
})

t.test('a route that declares nothing keeps the default caching headers (negative control)', async (t) => {
  const app = await noStoreApp(t)
  expectAnswer(t, await app.inject({ method: 'GET', url: '/public' }), 200, false, { ok: true })
})
