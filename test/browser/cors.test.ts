import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromium, type BrowserContext } from 'playwright-core'
import t from 'tap'
import { authHeader, build, createUser, login, tempDir, type TestContext } from '../helper.js'

/*
 * plugins/cors.ts as a browser sees it: Debian's Chromium opens a page served by a second loopback
 * server (another port, another origin) and calls the real gatehouse with fetch, PUT and DELETE
 * with a Bearer token, so Chromium sends its own preflight first. The negative control: a page of
 * an origin not in CORS_ORIGINS makes the same calls and Chromium refuses them.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync']

/** A headless Chromium with a fresh profile of its own; a missing browser fails the test. */
async function chromiumContext (t: TestContext): Promise<BrowserContext> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it (apt-get install -y chromium) or set CHROMIUM_PATH`)
  const context = await chromium.launchPersistentContext(tempDir(t), { executablePath: CHROMIUM, headless: true, args: ARGS })
  t.teardown(() => context.close())
  return context
}

/** A loopback server answering one blank page: the origin of a browser app. */
async function pageServer (t: TestContext): Promise<string> {
  const server: Server = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>app</title>') })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

interface Outcome { status?: number, body?: string, error?: string }

/** What the page's script sees of `fetch(url, { method, headers, body })`. */
async function fetchFrom (context: BrowserContext, pageOrigin: string, url: string, method: string, token: string, body?: unknown): Promise<Outcome> {
  const page = await context.newPage()
  try {
    await page.goto(`${pageOrigin}/`)
    return await page.evaluate(async ({ url, method, token, body }) => {
      try {
        const headers: Record<string, string> = { authorization: `Bearer ${token}` }
        if (body !== undefined) headers['content-type'] = 'application/json'
        const res = await fetch(url, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) })
        return { status: res.status, body: await res.text() }
      } catch (err) {
        return { error: String(err) }
      }
    }, { url, method, token, body })
  } finally {
    await page.close()
  }
}

t.test('a page of an origin in CORS_ORIGINS calls PUT and DELETE with a Bearer token in Chromium; another origin is refused', async (t) => {
  const appOrigin = await pageServer(t)
  const foreignOrigin = await pageServer(t)
  const app = await build(t, { CORS_ORIGINS: appOrigin })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const api = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const seen: string[] = []
  app.server.on('request', (req: { method?: string, url?: string }) => { seen.push(`${req.method ?? ''} ${req.url ?? ''}`) })

  const admin = await createUser(app, { roles: ['admin'] })
  const { access_token: token } = await login(app, admin)
  const target = await createUser(app, { name: 'Before' })
  const context = await chromiumContext(t)

  const put = await fetchFrom(context, appOrigin, `${api}/api/users/${target.id}`, 'PUT', token, { name: 'After' })
  t.equal(put.status, 200, put.error ?? put.body ?? '')
  const stored = await app.inject({ method: 'GET', url: `/api/users/${target.id}`, headers: authHeader(token) })
  t.same(JSON.parse(put.body ?? 'null'), stored.json(), 'the page read the whole answer')
  t.equal(stored.json().name, 'After')

  const del = await fetchFrom(context, appOrigin, `${api}/api/users/${target.id}`, 'DELETE', token)
  t.same(del, { status: 204, body: '' })
  t.equal((await app.inject({ method: 'GET', url: `/api/users/${target.id}`, headers: authHeader(token) })).statusCode, 404, 'the user is gone')
  // Chromium keeps a preflight's answer for 5 s (no Access-Control-Max-Age): the one before PUT allowed DELETE too
  t.same(seen, [`OPTIONS /api/users/${target.id}`, `PUT /api/users/${target.id}`, `DELETE /api/users/${target.id}`],
    'Chromium preflighted, then made both calls')

  // the negative control: an origin not in CORS_ORIGINS gets no preflight approval, so no call is made
  seen.length = 0
  const other = await createUser(app, { name: 'Kept' })
  const refusedPut = await fetchFrom(context, foreignOrigin, `${api}/api/users/${other.id}`, 'PUT', token, { name: 'Changed' })
  const refusedDelete = await fetchFrom(context, foreignOrigin, `${api}/api/users/${other.id}`, 'DELETE', token)
  t.same([refusedPut, refusedDelete], [{ error: 'TypeError: Failed to fetch' }, { error: 'TypeError: Failed to fetch' }])
  t.same(seen, [`OPTIONS /api/users/${other.id}`, `OPTIONS /api/users/${other.id}`], 'only the preflights reached the server')
  const kept = await app.inject({ method: 'GET', url: `/api/users/${other.id}`, headers: authHeader(token) })
  t.equal(kept.json().name, 'Kept', 'the user is untouched')
})
