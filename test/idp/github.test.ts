import t from 'tap'
import { startGithubDouble, stopGithubDouble } from './github-double.js'
import { accessClaims, answerOf, auditOf, CLIENT_SECRET, cookiesSet, IdpBrowser, idpApp, PORTAL_ORIGIN, refusal } from './support.js'

/*
 * GitHub as a provider (src/idp/github-upstream.ts) against a double that answers as GitHub's
 * documented endpoints: the OAuth app flow with PKCE, `/user`'s numeric id as the subject, and only
 * the primary address, verified, as the email.
 */

const github = await startGithubDouble({ clientId: 'Iv1.gatehouse', clientSecret: CLIENT_SECRET })
t.teardown(async () => { await stopGithubDouble(github) })
const app = await idpApp(t, [
  { id: 'github', type: 'github', display_name: 'GitHub', client_id: 'Iv1.gatehouse', github_url: github.url, github_api_url: github.apiUrl, allow_signup: true, role_mapping: { claim: 'login', values: { octocat: ['admin'] } } }
])

t.test('the start: 302 to github_url\'s authorize endpoint, no nonce (no ID token), PKCE S256', async (t) => {
  const start = await new IdpBrowser(app).get('/auth/idp/github/start')
  t.equal(start.statusCode, 302)
  const location = new URL(String(start.headers.location))
  t.equal(`${location.origin}${location.pathname}`, `${github.url}/login/oauth/authorize`)
  t.strictSame(Object.keys(Object.fromEntries(location.searchParams)).sort(), ['client_id', 'code_challenge', 'code_challenge_method', 'redirect_uri', 'response_type', 'scope', 'state'])
  t.match(Object.fromEntries(location.searchParams), { client_id: 'Iv1.gatehouse', redirect_uri: `${PORTAL_ORIGIN}/auth/idp/github/callback`, scope: 'read:user user:email', response_type: 'code', code_challenge_method: 'S256' })
})

t.test('a verified primary email counts: signed up with it, the numeric id the subject, /user\'s fields for role mapping', async (t) => {
  github.script({
    id: 583231,
    login: 'octocat',
    name: 'The Octocat',
    emails: [
      { email: 'octo-secondary@example.com', primary: false, verified: true },
      { email: 'Octocat@Example.com', primary: true, verified: true, visibility: 'public' }
    ]
  })
  const { callback } = await new IdpBrowser(app).signIn('github', '?rd=/portal/account')
  t.equal(callback.statusCode, 303)
  t.equal(callback.headers.location, `${PORTAL_ORIGIN}/portal/account`)
  t.strictSame(cookiesSet(callback), ['__Host-gh_idp=', 'access_token=…', '__Host-refresh_token=…', '__Host-gh_flow='])
  t.match(accessClaims(callback), { email: 'octocat@example.com', roles: ['user', 'admin'], amr: ['ext'], idp: 'github' })
  t.match(await app.store.identities.findBySubject('github', '583231'), { email: 'octocat@example.com' })
  t.match(await app.store.users.findByEmail('octocat@example.com'), { name: 'The Octocat', emailVerified: true })
  t.strictSame(await auditOf(app, 'registered'), [{ event: 'registered', outcome: 'success', userId: accessClaims(callback)?.user_id, email: 'octocat@example.com', detail: 'idp:github' }])
})

t.test('the login renamed, the same id: the same user signs in', async (t) => {
  github.script({ id: 583231, login: 'octo-renamed', emails: [{ email: 'octocat@example.com', primary: true, verified: true }] })
  const { callback } = await new IdpBrowser(app).signIn('github')
  t.match(accessClaims(callback), { email: 'octocat@example.com', roles: ['user'] }, 'the login no longer maps to admin')
})

t.test('a verified secondary address counts for nothing, nor does an unverified primary: no email, no sign-up', async (t) => {
  for (const [label, emails] of [
    ['verified secondary only', [{ email: 'second@example.com', primary: false, verified: true }, { email: 'first@example.com', primary: true, verified: false }]],
    ['no address', []]
  ] as const) {
    github.script({ id: 1000 + emails.length, login: 'nobody', emails: [...emails] })
    const { callback } = await new IdpBrowser(app).signIn('github')
    t.strictSame(answerOf(callback), refusal(403, 'signup_disabled', 'Sign-in refused', 'No account exists for this GitHub identity, and none can be created through it.'), label)
  }
  t.equal(await app.store.users.findByEmail('second@example.com'), undefined)
  t.equal(await app.store.users.findByEmail('first@example.com'), undefined)
})

t.test('GitHub\'s error answers: access_denied is a cancelled sign-in; a code GitHub refuses is idp_invalid', async (t) => {
  github.script({ error: 'access_denied', error_description: 'The user has denied your application access.' })
  const denied = await new IdpBrowser(app).signIn('github')
  t.strictSame(answerOf(denied.callback), refusal(400, 'idp_error', 'Sign-in cancelled', 'The sign-in with GitHub was cancelled.'))
  github.script({ id: 7, login: 'seven', emails: [{ email: 'seven@example.com', primary: true, verified: true }] })
  const browser = new IdpBrowser(app)
  const start = await browser.get('/auth/idp/github/start')
  const url = await browser.throughUpstream(String(start.headers.location))
  url.searchParams.set('code', 'not-a-code-github-issued')
  t.strictSame(answerOf(await browser.get(`${url.pathname}${url.search}`)), refusal(400, 'idp_invalid', 'Sign-in failed', 'The answer from GitHub could not be verified. Start the sign-in again.'))
  t.equal(await app.store.users.findByEmail('seven@example.com'), undefined)
})
