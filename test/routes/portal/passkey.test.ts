import t from 'tap'
import { hashedAssetNames } from '../../../src/portal/files.js'
import { alertCode, fieldValue, PAGE_HEADERS, PageClient, portalApp, PORTAL_ORIGIN } from './support.js'
import { PORTAL_PASSKEYS } from './passkey-support.js'

/*
 * POST /portal/passkey and the sign-in page's passkey form (routes/portal/passkey.ts,
 * routes/portal/login.ts, src/portal/templates/partials/passkey-form.eta) over inject: the
 * portal's rules (CSRF, forms only, the return URL, errors as pages) hold for the passkey's
 * form as for the password's. The ceremonies themselves: passkey-sign-in.test.ts and Chromium
 * (test/browser/passkeys.test.ts).
 */

const SCRIPT = `${PORTAL_ORIGIN}/portal/assets/${hashedAssetNames().get('passkeys.js') ?? ''}`

/** The hidden fields of the page's passkey form, and its options route. */
function passkeyForm (html: string): Record<string, string | undefined> | undefined {
  const form = /<form method="post" action="([^"]+)" class="passkey" data-passkey="login" data-options-url="([^"]+)" hidden>([\s\S]*?)<\/form>/.exec(html)
  if (form === null) return undefined
  const fields = form[3] ?? ''
  return { action: form[1], optionsUrl: form[2], csrf: fieldValue(fields, 'csrf'), rd: fieldValue(fields, 'rd'), challenge_id: fieldValue(fields, 'challenge_id'), credential: fieldValue(fields, 'credential') }
}

t.test('with ENABLE_PASSKEYS the sign-in page carries the hidden passkey form and passkeys.js; the page is still kept rendered', async (t) => {
  const app = await portalApp(t, PORTAL_PASSKEYS)
  const browser = new PageClient(app)
  const page = await browser.get('/portal/login?rd=/portal/account')
  t.equal(page.statusCode, 200)
  t.match(page.headers, PAGE_HEADERS)
  t.same(passkeyForm(page.body), {
    action: '/portal/passkey',
    optionsUrl: `${PORTAL_ORIGIN}/auth/passkeys/login/options`,
    // the script copies the page's token in: the kept rendering has one place for it
    csrf: '',
    rd: `${PORTAL_ORIGIN}/portal/account`,
    challenge_id: '',
    credential: ''
  })
  t.ok(page.body.includes(`<script src="${SCRIPT}" defer></script>`), 'the script, by its hashed name')
  t.match(page.body, /autocomplete="username webauthn"/, 'the email field offers passkeys in its autofill')
  const asset = await app.inject({ url: new URL(SCRIPT).pathname })
  t.equal(asset.statusCode, 200)
  t.match(asset.headers['content-type'], /^(text|application)\/javascript/)

  const again = await app.inject({ url: '/portal/login?rd=/portal/account' })
  const tokenOf = (body: string): string => fieldValue(body, 'csrf') ?? ''
  t.equal(again.body.replace(tokenOf(again.body), 'T'), page.body.replace(tokenOf(page.body), 'T'), 'the same page but for the token')
})

t.test('with passkeys off: no passkey form, no script, POST /portal/passkey is 404 and the two-factor form takes no credential', async (t) => {
  const app = await portalApp(t)
  const browser = new PageClient(app)
  const page = await browser.get('/portal/login')
  t.equal(passkeyForm(page.body), undefined)
  t.notMatch(page.body, /passkeys\.[0-9a-f]+\.js/)
  const posted = await browser.post('/portal/passkey', { challenge_id: 'x', credential: '{}' })
  t.equal(posted.statusCode, 404)
  t.equal(alertCode(posted.body), 'not_found')
  for (const path of ['/portal/account/passkey-add', '/portal/account/passkey-rename', '/portal/account/passkey-remove']) {
    t.equal((await browser.post(path, {})).statusCode, 404, path)
  }
  // the negative control: on, the route exists
  const on = await portalApp(t, PORTAL_PASSKEYS)
  t.equal((await new PageClient(on).post('/portal/passkey', { challenge_id: 'x', credential: '{}' })).statusCode, 400)
})

t.test('POST /portal/passkey keeps the portal\'s rules: CSRF token and Origin, forms only', async (t) => {
  const app = await portalApp(t, PORTAL_PASSKEYS)
  const browser = new PageClient(app)
  const fields = { challenge_id: 'x', credential: '{}' }
  const forged = await browser.post('/portal/passkey', { ...fields, csrf: 'x'.repeat(43) })
  t.equal(forged.statusCode, 403)
  t.equal(alertCode(forged.body), 'csrf_rejected')
  const foreign = await browser.post('/portal/passkey', fields, { origin: 'http://evil.localhost' })
  t.equal(foreign.statusCode, 403)
  t.equal(alertCode(foreign.body), 'csrf_rejected')
  const json = await app.inject({ method: 'POST', url: '/portal/passkey', headers: { 'content-type': 'application/json', cookie: browser.cookieHeader() }, payload: JSON.stringify(fields) })
  t.equal(json.statusCode, 415)
  t.match(json.headers, PAGE_HEADERS)
  // the negative control: the same browser's form gets past both checks, to the credential's own verdict
  t.equal(alertCode((await browser.post('/portal/passkey', fields)).body), 'passkey_invalid')
})

t.test('a credential that is not JSON, not a credential, or for no challenge: the sign-in page again, 400 passkey_invalid, the return URL kept', async (t) => {
  const app = await portalApp(t, PORTAL_PASSKEYS)
  const browser = new PageClient(app)
  const options = await app.inject({ method: 'POST', url: '/auth/passkeys/login/options', payload: {} })
  t.equal(options.statusCode, 200)
  const challengeId = (options.json() as { challenge_id: string }).challenge_id
  const rd = '/portal/account'
  const cases = {
    'not JSON': { challenge_id: challengeId, credential: 'not json' },
    'JSON, not a credential': { challenge_id: challengeId, credential: '{"id":"AAAA","type":"public-key"}' },
    'a JSON string': { challenge_id: challengeId, credential: '"x"' },
    'an unknown challenge': { challenge_id: 'no-such-challenge', credential: '{}' },
    empty: { challenge_id: '', credential: '' }
  }
  for (const [name, fields] of Object.entries(cases)) {
    const page = await browser.post('/portal/passkey', { ...fields, rd })
    t.equal(page.statusCode, 400, name)
    t.match(page.headers, PAGE_HEADERS)
    t.equal(alertCode(page.body), 'passkey_invalid', name)
    t.match(page.body, '<title>Sign in – gatehouse</title>')
    t.equal(passkeyForm(page.body)?.rd, `${PORTAL_ORIGIN}${rd}`, 'the return URL carried on')
  }
  t.notOk(browser.jar.has('access_token'), 'nobody is signed in')
  const refused = await browser.post('/portal/passkey', { ...cases['not JSON'], rd: 'https://evil.example/' })
  t.equal(passkeyForm(refused.body)?.rd, `${PORTAL_ORIGIN}/portal/account`, 'a refused return URL is replaced by the default')
})

t.test('the fields are bounded: an oversized credential or challenge id is a 422, not a crash', async (t) => {
  const app = await portalApp(t, PORTAL_PASSKEYS)
  const browser = new PageClient(app)
  const big = await browser.post('/portal/passkey', { challenge_id: 'x', credential: 'x'.repeat(16385) })
  t.equal(big.statusCode, 422)
  t.equal(alertCode(big.body), 'validation_failed')
  const long = await browser.post('/portal/passkey', { challenge_id: 'x'.repeat(129), credential: '{}' })
  t.equal(long.statusCode, 422)
  const missing = await browser.post('/portal/passkey', { challenge_id: 'x' })
  t.equal(missing.statusCode, 422)
})
