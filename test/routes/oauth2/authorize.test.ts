import t from 'tap'
import { alertCode, PAGE_HEADERS, PageClient } from '../portal/support.js'
import { addClient, authorizeUrl, flowApp, ISSUER, person, pkce, queryOf, REDIRECT, signedIn } from './flow-support.js'

/* GET /oauth2/authorize, §15.1 steps 1 and 2 (routes/oauth2/authorize.ts, src/oidc/authorize-request.ts): every error where the contract puts it. */

const p = pkce()

t.test('step 1: an unknown or disabled client, or a redirect_uri not exactly registered, is a 400 page, never a redirect', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app', { redirect_uris: [REDIRECT, 'http://127.0.0.1:8080/cb?tenant=a'] })
  await addClient(flow, 'off-app', { disabled: true })
  const browser = await signedIn(flow, await person(flow, 'ann@example.com'))
  const cases: Array<[string, Record<string, string>, string]> = [
    ['unknown client', { client_id: 'nobody-app' }, 'invalid_client'],
    ['disabled client', { client_id: 'off-app' }, 'invalid_client'],
    ['no redirect_uri', { redirect_uri: '' }, 'invalid_redirect_uri'],
    ['trailing slash', { redirect_uri: `${REDIRECT}/` }, 'invalid_redirect_uri'],
    ['another port', { redirect_uri: 'https://app.example:8443/cb' }, 'invalid_redirect_uri'],
    ['an extra query', { redirect_uri: `${REDIRECT}?x=1` }, 'invalid_redirect_uri'],
    ['a query changed', { redirect_uri: 'http://127.0.0.1:8080/cb?tenant=b' }, 'invalid_redirect_uri'],
    ['another port on loopback', { redirect_uri: 'http://127.0.0.1:8081/cb?tenant=a' }, 'invalid_redirect_uri'],
    // the errors of step 2 are not even looked at: the redirect_uri cannot be trusted
    ['bad redirect and no PKCE', { redirect_uri: 'https://evil.example/cb', code_challenge: '' }, 'invalid_redirect_uri']
  ]
  for (const [name, extra, code] of cases) {
    const url = authorizeUrl(extra.client_id ?? 'web-app', p.challenge, extra).replace('redirect_uri=&', '')
    const res = await browser.get(url)
    t.equal(res.statusCode, 400, name)
    t.equal(res.headers.location, undefined, `${name}: no redirect`)
    t.equal(alertCode(res.body), code, name)
    t.match(res.headers, PAGE_HEADERS, `${name}: the portal's headers`)
    t.match(res.headers['content-type'], /^text\/html/, name)
  }
  // a repeated client_id cannot be trusted either
  const twice = await browser.get(`${authorizeUrl('web-app', p.challenge)}&client_id=web-app`)
  t.equal(twice.statusCode, 400)
  t.equal(alertCode(twice.body), 'invalid_client')
  // the registered loopback URI with its query is accepted exactly, and its query kept
  const exact = await browser.get(authorizeUrl('web-app', p.challenge, { redirect_uri: 'http://127.0.0.1:8080/cb?tenant=a' }))
  t.equal(exact.statusCode, 303)
  t.match(exact.headers.location, /\/portal\/consent\?interaction=/)
})

t.test('step 2: every error goes back to redirect_uri with error, error_description, state and iss', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app')
  const browser = await signedIn(flow, await person(flow, 'ann@example.com'))
  const cases: Array<[string, Record<string, string>, string]> = [
    ['response_type token', { response_type: 'token' }, 'unsupported_response_type'],
    ['no response_type', { response_type: '' }, 'unsupported_response_type'],
    ['scope without openid', { scope: 'profile email' }, 'invalid_scope'],
    ['a scope the client lacks', { scope: 'openid roles' }, 'invalid_scope'],
    ['no code_challenge (no PKCE)', { code_challenge: '' }, 'invalid_request'],
    ['code_challenge_method plain', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['no code_challenge_method', { code_challenge_method: '' }, 'invalid_request'],
    ['a challenge of the wrong shape', { code_challenge: 'short' }, 'invalid_request'],
    ['a request object', { request: 'eyJhbGciOiJub25lIn0.e30.' }, 'request_not_supported'],
    ['a request_uri', { request_uri: 'https://app.example/req' }, 'request_uri_not_supported'],
    ['prompt=none with login', { prompt: 'none login' }, 'invalid_request'],
    ['prompt=none with consent', { prompt: 'none consent' }, 'invalid_request'],
    ['an unknown prompt', { prompt: 'select_account' }, 'invalid_request'],
    ['response_mode fragment', { response_mode: 'fragment' }, 'invalid_request'],
    ['max_age not a number', { max_age: 'soon' }, 'invalid_request']
  ]
  for (const [name, extra, error] of cases) {
    const query = Object.fromEntries(Object.entries(extra).filter(([, v]) => v !== ''))
    let url = authorizeUrl('web-app', p.challenge, query)
    for (const [key, value] of Object.entries(extra)) if (value === '') url = url.replace(new RegExp(`[?&]${key}=[^&]*`), (m) => (m.startsWith('?') ? '?' : ''))
    const res = await browser.get(url)
    t.equal(res.statusCode, 302, name)
    const location = new URL(res.headers.location as string)
    t.equal(`${location.origin}${location.pathname}`, REDIRECT, name)
    const q = queryOf(res)
    t.strictSame(Object.keys(q), ['error', 'error_description', 'state', 'iss'], name)
    t.equal(q.error, error, name)
    t.equal(q.state, 'st-1', `${name}: state echoed`)
    t.equal(q.iss, ISSUER, `${name}: RFC 9207 iss`)
  }
  // the state is echoed as sent, whatever it holds; none sent, none returned
  const odd = await browser.get(authorizeUrl('web-app', p.challenge, { response_type: 'token', state: 'a b&c=d/é' }))
  t.equal(queryOf(odd).state, 'a b&c=d/é')
  const stateless = await browser.get(authorizeUrl('web-app', p.challenge, { response_type: 'token' }).replace('&state=st-1', ''))
  t.strictSame(Object.keys(queryOf(stateless)), ['error', 'error_description', 'iss'])
  // negative control: the same request, well formed, is not refused
  const fine = await browser.get(authorizeUrl('web-app', p.challenge))
  t.equal(fine.statusCode, 303)
  t.match(fine.headers.location, `${ISSUER}/portal/consent?interaction=`)
})

t.test('GET only; off, /oauth2/authorize does not exist', async (t) => {
  const flow = await flowApp(t)
  const post = await flow.app.inject({ method: 'POST', url: '/oauth2/authorize', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'client_id=x' })
  t.equal(post.statusCode, 405)
  t.equal(post.headers.allow, 'GET, HEAD')
  const { build } = await import('../../helper.js')
  const off = await build(t, { ENABLE_PORTAL: true, PUBLIC_URL: ISSUER })
  const browser = new PageClient(off)
  t.equal((await browser.get(authorizeUrl('web-app', p.challenge))).statusCode, 404)
  for (const url of ['/oauth2/token', '/oauth2/userinfo', '/oauth2/revoke', '/oauth2/introspect', '/oauth2/end-session']) {
    t.equal((await off.inject({ method: 'GET', url })).statusCode, 404, url)
  }
})
