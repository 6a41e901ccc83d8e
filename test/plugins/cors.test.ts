import t from 'tap'
import { build } from '../helper.js'

/*
 * plugins/cors.ts in the whole app (CORS_ORIGINS set): a preflight allows every method the routes
 * have, and an unknown path stays the ErrorResponse 404 whatever the method, as without CORS. A
 * browser's view of the same: test/browser/cors.test.ts.
 */

const APP = 'https://app.example.com'
const NOT_FOUND = { error: 'Not Found', message: 'The requested resource was not found', code: 'not_found' }
const PREFLIGHT = (method: string) => ({ origin: APP, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type' })

t.test('a preflight from an origin of CORS_ORIGINS allows every method the routes have, PUT and DELETE included', async (t) => {
  const app = await build(t, { CORS_ORIGINS: APP })
  for (const [method, url] of [['PUT', '/api/users/00000000-0000-4000-8000-000000000000'], ['DELETE', '/api/auth/sessions/00000000-0000-4000-8000-000000000000']] as const) {
    const res = await app.inject({ method: 'OPTIONS', url, headers: PREFLIGHT(method) })
    t.equal(res.statusCode, 204, `${method} ${url}`)
    t.equal(res.body, '')
    t.equal(res.headers['access-control-allow-origin'], APP)
    t.equal(res.headers['access-control-allow-credentials'], 'true')
    t.equal(res.headers['access-control-allow-methods'], 'DELETE, GET, HEAD, PATCH, POST, PUT, QUERY, TRACE')
    t.equal(res.headers['access-control-allow-headers'], 'Authorization, Content-Type')
  }
})

t.test('with CORS_ORIGINS set, an unknown path answers the ErrorResponse 404 to every method, a preflight included', async (t) => {
  for (const origins of [undefined, APP]) {
    const app = await build(t, { ...(origins !== undefined && { CORS_ORIGINS: origins }) })
    const cases = [
      { method: 'GET', url: '/no-such-path' },
      { method: 'POST', url: '/no-such-path', headers: { 'content-type': 'application/json' }, payload: '{}' },
      { method: 'DELETE', url: '/api/no-such-path?x=1' },
      { method: 'OPTIONS', url: '/no-such-path' },
      { method: 'OPTIONS', url: '/no-such-path', headers: PREFLIGHT('PUT') }
    ] as const
    for (const request of cases) {
      const res = await app.inject(request)
      const name = `${origins === undefined ? 'no CORS' : 'CORS'}: ${request.method} ${request.url}${'headers' in request && 'origin' in request.headers ? ' (preflight)' : ''}`
      t.equal(res.statusCode, 404, name)
      t.same(res.json(), NOT_FOUND, name)
      t.equal(res.headers.allow, undefined, name)
      t.equal(res.headers['access-control-allow-methods'], undefined, `${name}: no preflight answer`)
    }
  }
})

t.test('with CORS_ORIGINS set, a known path under another method is 405 with Allow, and an OPTIONS that is no preflight too', async (t) => {
  const app = await build(t, { CORS_ORIGINS: APP })
  const wrong = await app.inject({ method: 'DELETE', url: '/auth/login' })
  t.equal(wrong.statusCode, 405)
  t.equal(wrong.headers.allow, 'POST')
  t.same(wrong.json(), { error: 'Method Not Allowed', message: 'Method DELETE is not allowed on this resource', code: 'method_not_allowed' })

  const bare = await app.inject({ method: 'OPTIONS', url: '/auth/login' })
  t.equal(bare.statusCode, 405, 'no Origin, no Access-Control-Request-Method: not a preflight')
  t.equal(bare.headers.allow, 'POST')
  t.same(bare.json(), { error: 'Method Not Allowed', message: 'Method OPTIONS is not allowed on this resource', code: 'method_not_allowed' })

  const preflight = await app.inject({ method: 'OPTIONS', url: '/auth/login', headers: PREFLIGHT('POST') })
  t.equal(preflight.statusCode, 204, 'the same path, preflighted')
  t.equal(preflight.headers['access-control-allow-origin'], APP)
})
