import t from 'tap'
import { build } from '../helper.js'
import { alertCode, PAGE_HEADERS, PageClient, portalApp, PORTAL_ORIGIN } from '../routes/portal/support.js'

t.test('off by default: nothing under /portal/ exists, and /auth/login answers JSON as ever', async (t) => {
  const app = await build(t)
  const page = await app.inject({ url: '/portal/login' })
  t.equal(page.statusCode, 404)
  t.equal(page.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(page.json().code, 'not_found')
})

t.test('the style sheet is served hash-named, as text/css, with the pages\' headers; its plain name is a 404 page', async (t) => {
  const app = await portalApp(t)
  const login = await app.inject({ url: '/portal/login' })
  const href = /<link rel="stylesheet" href="([^"]+)">/.exec(login.body)?.[1] ?? ''
  t.match(href, /^\/portal\/assets\/style\.[0-9a-f]{10}\.css$/)
  const css = await app.inject({ url: href })
  t.equal(css.statusCode, 200)
  t.match(css.headers, { ...PAGE_HEADERS, 'content-type': 'text/css; charset=utf-8' })
  t.match(css.body, /:focus-visible/)
  const icon = /<link rel="icon" href="([^"]+)" type="image\/svg\+xml">/.exec(login.body)?.[1] ?? ''
  t.match(icon, /^\/portal\/assets\/icon\.[0-9a-f]{10}\.svg$/, 'an icon of its own, so browsers do not ask for /favicon.ico')
  const svg = await app.inject({ url: icon })
  t.equal(svg.statusCode, 200)
  t.equal(svg.headers['content-type'], 'image/svg+xml')
  const plain = await app.inject({ url: '/portal/assets/style.css' })
  t.equal(plain.statusCode, 404)
  t.match(plain.headers, { ...PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8' })
  t.equal(alertCode(plain.body), 'not_found')
  t.match(plain.body, /<title>Page not found – gatehouse<\/title>/)
})

t.test('an unknown method on a page is a 405 page with Allow; a traversal is a 404 page', async (t) => {
  const app = await portalApp(t)
  const put = await app.inject({ method: 'PUT', url: '/portal/login' })
  t.equal(put.statusCode, 405)
  t.equal(put.headers.allow, 'GET, HEAD, POST')
  t.equal(alertCode(put.body), 'method_not_allowed')
  const traversal = await app.inject({ url: '/portal/assets/..%2f..%2fpackage.json' })
  t.equal(traversal.statusCode, 404)
  t.notMatch(traversal.body, /"name": "gatehouse"/)
})

t.test('the pages\' Origin rule: own Origin, or null/none with Sec-Fetch-Site same-origin; anything else is 403', async (t) => {
  const app = await portalApp(t)
  const browser = new PageClient(app)
  const none = undefined
  const cases: Array<[string, Record<string, string | undefined>, number]> = [
    ['own Origin', { origin: PORTAL_ORIGIN, 'sec-fetch-site': none }, 401],
    ['Origin null, same-origin fetch site', { origin: 'null', 'sec-fetch-site': 'same-origin' }, 401],
    ['no Origin, same-origin fetch site', { origin: none, 'sec-fetch-site': 'same-origin' }, 401],
    ['no Origin, own Referer', { origin: none, 'sec-fetch-site': none, referer: `${PORTAL_ORIGIN}/portal/login` }, 401],
    ['foreign Origin', { origin: 'http://evil.localhost', 'sec-fetch-site': 'same-origin' }, 403],
    ['Origin null, cross-site', { origin: 'null', 'sec-fetch-site': 'cross-site' }, 403],
    ['no Origin, foreign Referer', { origin: none, 'sec-fetch-site': 'same-origin', referer: 'http://evil.localhost/' }, 403],
    ['none of the three', { origin: none, 'sec-fetch-site': none }, 403]
  ]
  for (const [name, headers, status] of cases) {
    const answer = await browser.post('/portal/login', { email: 'nobody@example.com', password: 'x' }, headers)
    t.equal(answer.statusCode, status, name)
    t.equal(alertCode(answer.body), status === 403 ? 'csrf_rejected' : 'invalid_credentials', name)
  }
})

t.test('a form body past BODY_LIMIT is a 413 page, a non-form POST 415, before any service runs', async (t) => {
  const app = await portalApp(t, { BODY_LIMIT: 1024 })
  const browser = new PageClient(app)
  const big = await browser.post('/portal/login', { email: 'a@example.com', password: 'x'.repeat(2000) })
  t.equal(big.statusCode, 413)
  t.equal(alertCode(big.body), 'payload_too_large')
  const none = await app.inject({ method: 'POST', url: '/portal/login', headers: { origin: PORTAL_ORIGIN } })
  t.equal(none.statusCode, 415)
  t.equal(alertCode(none.body), 'unsupported_media_type')
})

t.test('/openapi.json has no /portal path', async (t) => {
  const app = await portalApp(t)
  const document = (await app.inject({ url: '/openapi.json' })).json() as { paths: Record<string, unknown> }
  t.same(Object.keys(document.paths).filter((path) => path.startsWith('/portal')), [])
})
