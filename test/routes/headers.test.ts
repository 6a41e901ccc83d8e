// Proves plugins/security.ts and routes/docs.ts.
import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { DOCS_CSP } from '../../routes/docs.js'
import { build, createUser, login, PASSWORD } from '../helper.js'
import { HELMET } from '../patterns.js'

async function listen (app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return (app.server.address() as AddressInfo).port
}

/** A raw HTTP/1.1 exchange (fetch and http.request would refuse or rewrite such requests). */
function exchange (port: number, request: string): Promise<{ status: string, body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    socket.on('data', (chunk: Buffer) => { answer += chunk.toString() })
    socket.on('error', reject)
    socket.on('close', () => {
      const [head = '', body = ''] = answer.split('\r\n\r\n')
      resolve({ status: head.split('\r\n')[0] ?? '', body })
    })
    socket.end(request)
  })
}

t.test('every token response is uncacheable: login, /api/auth/login, refresh, register', async (t) => {
  const app = await build(t, { ENABLE_REGISTER: true })
  const user = await createUser(app)
  const { refresh_token: refreshToken } = await login(app, user)
  const answers = {
    'POST /auth/login': await app.inject({ method: 'POST', url: '/auth/login', payload: { email: user.email, password: PASSWORD } }),
    'POST /api/auth/login': await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: PASSWORD } }),
    'POST /auth/refresh': await app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: refreshToken } }),
    'POST /auth/register': await app.inject({ method: 'POST', url: '/auth/register', payload: { email: 'fresh@example.com', password: PASSWORD, name: 'Fresh User' } })
  }
  for (const [route, res] of Object.entries(answers)) {
    t.equal(res.statusCode, route === 'POST /auth/register' ? 201 : 200, route)
    t.match(res.json(), { token_type: 'Bearer', access_token: String, refresh_token: String }, `${route} answers tokens`)
    t.equal(res.headers['cache-control'], 'no-store', `${route} Cache-Control`)
    t.equal(res.headers.pragma, 'no-cache', `${route} Pragma`)
  }
})

t.test('helmet headers are on API successes and errors, with the API CSP', async (t) => {
  const app = await build(t)
  for (const url of ['/health', '/openapi.json', '/api/users', '/nowhere']) {
    const res = await app.inject({ method: 'GET', url })
    t.match(res.headers, HELMET, `GET ${url} (${res.statusCode})`)
    t.equal(res.headers['strict-transport-security'], undefined, 'no HSTS outside production')
  }
})

t.test('in production the API also sends HSTS', async (t) => {
  const app = await build(t, { APP_ENV: 'production' })
  const res = await app.inject({ method: 'GET', url: '/health' })
  t.equal(res.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains')
})

t.test('the docs page and its assets get the docs CSP, and only they', async (t) => {
  const app = await build(t)
  t.equal(DOCS_CSP, "default-src 'none'; script-src 'self'; style-src 'self' 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
  for (const url of ['/docs', '/docs/', '/docs/static/swagger-ui.css', '/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-initializer.js', '/docs/json']) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 200, url)
    t.equal(res.headers['content-security-policy'], DOCS_CSP, `${url} CSP`)
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${url} keeps the other helmet headers`)
  }
  const page = await app.inject({ method: 'GET', url: '/docs' })
  t.match(page.headers['content-type'], /^text\/html/)
  t.notMatch(page.body, /<script>|<style>|https?:\/\/(?!127)/, 'no inline code and no other origin in the page')
  for (const url of ['/openapi.json', '/health', '/docsx', '/auth/login']) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.headers['content-security-policy'], HELMET['content-security-policy'], `${url} keeps default-src 'none'`)
  }
})

t.test('headers over Node\'s 16 KiB limit get a 431, never a 500', async (t) => {
  const app = await build(t)
  const port = await listen(app)
  const res = await exchange(port, `GET /health HTTP/1.1\r\nhost: localhost\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`)
  t.equal(res.status, 'HTTP/1.1 431 Request Header Fields Too Large')
  // written by buildApp's clientErrorHandler before any route runs, still in the ErrorResponse shape
  t.same(JSON.parse(res.body), { error: 'Request Header Fields Too Large', message: 'The request headers are too large', code: 'headers_too_large' })
})

t.test('headers past the hundredth are dropped, not parsed, and the request is served', async (t) => {
  const app = await build(t)
  const port = await listen(app)
  const extra = Array.from({ length: 300 }, (_, i) => `x-extra-${i}: v`).join('\r\n')
  const res = await exchange(port, `GET /health HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n${extra}\r\n\r\n`)
  t.equal(res.status, 'HTTP/1.1 200 OK')
  t.same(JSON.parse(res.body), { status: 'ok' })
})

t.test('a chunked body that outgrows BODY_LIMIT gets 413 payload_too_large over real HTTP', async (t) => {
  const app = await build(t, { BODY_LIMIT: 1024 })
  const port = await listen(app)
  const body = JSON.stringify({ email: 'a@b.io', password: 'x'.repeat(1100) })
  const chunks = [body.slice(0, 600), body.slice(600)].map((part) => `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`).join('')
  const res = await exchange(port, `POST /auth/login HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n${chunks}0\r\n\r\n`)
  t.equal(res.status, 'HTTP/1.1 413 Payload Too Large')
  t.same(JSON.parse(res.body), { error: 'Payload Too Large', message: 'The request body is too large', code: 'payload_too_large' })
})
