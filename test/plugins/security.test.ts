import type { FastifyInstance } from 'fastify'
import t from 'tap'
import securityPlugin from '../../plugins/security.js'
import { buildBare, type TestContext } from '../helper.js'
import { HELMET } from '../patterns.js'

/*
 * plugins/security.ts on a bare Fastify: helmet's headers, worked out once, go on every answer —
 * a success, a thrown error, an unknown route — and HSTS only in production.
 */

async function securityApp (t: TestContext, values: Record<string, unknown> = {}): Promise<FastifyInstance> {
  return await buildBare(t, [securityPlugin], (app) => {
    app.get('/ok', async () => ({ ok: true }))
    app.get('/fails', async () => { throw new Error('boom') })
  }, values)
}

t.test('helmet headers with the API CSP are on a success, an error and a 404, without HSTS outside production', async (t) => {
  const app = await securityApp(t)
  for (const [url, status] of [['/ok', 200], ['/fails', 500], ['/nowhere', 404]] as const) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, status, url)
    t.match(res.headers, HELMET, `GET ${url}`)
    t.equal(res.headers['strict-transport-security'], undefined, 'no HSTS outside production')
  }
})

t.test('in production the answers also carry HSTS', async (t) => {
  const app = await securityApp(t, { APP_ENV: 'production' })
  for (const url of ['/ok', '/fails', '/nowhere']) {
    const res = await app.inject({ method: 'GET', url })
    t.match(res.headers, HELMET, `GET ${url}`)
    t.equal(res.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains', `GET ${url}`)
  }
})
