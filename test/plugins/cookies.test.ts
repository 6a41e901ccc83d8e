import type { FastifyInstance } from 'fastify'
import t from 'tap'
import cookiesPlugin from '../../plugins/cookies.js'
import type { TokenPair } from '../../src/sessions/session-service.js'
import { buildBare, setCookies, type TestContext } from '../helper.js'

/*
 * plugins/cookies.ts on a bare Fastify: the reply decorators write the two session cookies with
 * the attributes the browser session needs, and clear them on the same paths.
 */

const PAIR = { accessToken: 'access.jwt.value', refreshToken: 'refresh.jwt.value' } as TokenPair

async function cookiesApp (t: TestContext, values: Record<string, unknown> = {}): Promise<FastifyInstance> {
  return await buildBare(t, [cookiesPlugin], (app) => {
    app.post('/set', async (_request, reply) => reply.setAuthCookies(PAIR).send({}))
    app.post('/clear', async (_request, reply) => reply.clearAuthCookies().code(204).send())
  }, values)
}

t.test('setAuthCookies sets exactly the HttpOnly, SameSite=Lax access cookie on / and refresh cookie on /auth, for their lifetimes', async (t) => {
  const app = await cookiesApp(t)
  const res = await app.inject({ method: 'POST', url: '/set' })
  t.equal(res.statusCode, 200)
  t.strictSame(setCookies(res), [
    { name: 'access_token', value: PAIR.accessToken, attributes: { 'max-age': '900', path: '/', httponly: true, samesite: 'Lax' } },
    { name: 'refresh_token', value: PAIR.refreshToken, attributes: { 'max-age': '604800', path: '/auth', httponly: true, samesite: 'Lax' } }
  ])
})

t.test('in production both cookies are Secure', async (t) => {
  const app = await cookiesApp(t, { APP_ENV: 'production' })
  const res = await app.inject({ method: 'POST', url: '/set' })
  t.strictSame(setCookies(res), [
    { name: 'access_token', value: PAIR.accessToken, attributes: { 'max-age': '900', path: '/', httponly: true, samesite: 'Lax', secure: true } },
    { name: 'refresh_token', value: PAIR.refreshToken, attributes: { 'max-age': '604800', path: '/auth', httponly: true, samesite: 'Lax', secure: true } }
  ])
})

t.test('clearAuthCookies empties both cookies on their own paths and expires them now', async (t) => {
  const app = await cookiesApp(t)
  const res = await app.inject({ method: 'POST', url: '/clear' })
  t.equal(res.statusCode, 204)
  const cookies = setCookies(res)
  t.strictSame(cookies.map((c) => [c.name, c.value, c.attributes.path, c.attributes.httponly, c.attributes.samesite]), [
    ['access_token', '', '/', true, 'Lax'],
    ['refresh_token', '', '/auth', true, 'Lax']
  ])
  for (const { name, attributes } of cookies) {
    const expires = typeof attributes.expires === 'string' ? Date.parse(attributes.expires) : Number.NaN
    t.ok(attributes['max-age'] === '0' || expires < Date.now(), `${name} expires now`)
  }
})
