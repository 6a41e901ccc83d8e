import type { BrowserContext, Page } from 'playwright-core'
import t from 'tap'
import { submit } from '../../scripts/portal-pages.js'
import { build, type TestContext } from '../helper.js'
import { startGithubDouble, stopGithubDouble, type GithubDouble } from '../idp/github-double.js'
import { CLIENT_SECRET } from '../idp/support.js'
import { startUpstream, stopUpstream, type Upstream } from '../idp/upstream.js'
import { idpValues } from '../routes/api/identities-support.js'
import { axeViolations, freePort, launchChromium, pageProblems } from '../routes/portal/chromium.js'

/*
 * Sign-in through identity providers and the connected accounts (routes/auth/idp.ts,
 * routes/portal/login.ts, routes/portal/account/identities.ts) in Debian's Chromium, against a real
 * server listening on 127.0.0.1 as auth.gh.localhost, and two real upstreams on loopback: an OpenID
 * Connect provider (oidc-provider, test/idp/upstream.ts) and the GitHub double
 * (test/idp/github-double.ts). Chromium follows every redirect itself, cookies and all. One browser
 * for the file.
 */

const browser = await launchChromium(t)

interface World { origin: string, corp: Upstream, github: GithubDouble, app: Awaited<ReturnType<typeof build>> }

/** The two upstreams, then gatehouse on the port their redirect URIs name, listening. */
async function world (t: TestContext): Promise<World> {
  const port = await freePort()
  const origin = `http://auth.gh.localhost:${port}`
  const corp = await startUpstream([{ client_id: 'gatehouse', client_secret: CLIENT_SECRET, redirect_uris: [`${origin}/auth/idp/corp/callback`] }])
  t.teardown(async () => { await stopUpstream(corp) })
  const github = await startGithubDouble({ clientId: 'gatehouse', clientSecret: CLIENT_SECRET })
  t.teardown(async () => { await stopGithubDouble(github) })
  const providers = [
    { id: 'corp', type: 'oidc', display_name: 'Corp SSO', issuer: corp.issuer, allow_signup: true },
    { id: 'github', type: 'github', display_name: 'GitHub', github_url: github.url, github_api_url: github.apiUrl }
  ]
  const app = await build(t, idpValues(t, { PUBLIC_URL: origin }, providers))
  await app.listen({ host: '127.0.0.1', port })
  return { origin, corp, github, app }
}

async function browse (t: TestContext): Promise<{ context: BrowserContext, page: Page, problems: string[] }> {
  const context = await browser.newContext()
  t.teardown(() => context.close())
  const page = await context.newPage()
  return { context, page, problems: pageProblems(page) }
}

const claimsOf = async (context: BrowserContext): Promise<Record<string, unknown>> => {
  const token = (await context.cookies()).find((c) => c.name === 'access_token')?.value ?? ''
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'))
}

/** The connected accounts as the account page's table shows them: service and email. */
async function connected (page: Page): Promise<string[][]> {
  const rows = page.getByRole('region', { name: 'Connected accounts' }).locator('tbody tr')
  return await rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 2).map((td) => td.textContent ?? '')))
}

t.test('the sign-in page\'s provider link → the provider → back at the return URL, signed in; then connect a second provider and disconnect one', async (t) => {
  const { origin, corp, github, app } = await world(t)
  const b = await browse(t)
  const rd = `${origin}/auth/me`

  await b.page.goto(`${origin}/portal/login?rd=${encodeURIComponent(rd)}`)
  const link = b.page.getByRole('link', { name: 'Sign in with Corp SSO' })
  t.equal(await link.getAttribute('href'), `${origin}/auth/idp/corp/start?rd=${encodeURIComponent(rd)}`)
  t.ok(await b.page.getByRole('link', { name: 'Sign in with GitHub' }).isVisible(), 'a link per provider')
  t.same(await axeViolations(b.page), [], 'the sign-in page with its provider links')

  corp.script({ sub: 'ada-1', email: 'ada@example.com', email_verified: true, name: 'Ada Lovelace' })
  const [landed] = await Promise.all([b.page.waitForURL(rd), link.click()])
  t.equal(landed, undefined)
  t.match(JSON.parse(await b.page.locator('body').innerText()), { email: 'ada@example.com', name: 'Ada Lovelace' }, 'an account made through the provider, signed in')
  t.match(await claimsOf(b.context), { aal: 'aal1', amr: ['ext'], idp: 'corp' })
  t.notOk((await b.context.cookies()).some((c) => c.name === '__Host-gh_idp'), 'the flow cookie is spent')

  await b.page.goto(`${origin}/portal/account`)
  t.same(await connected(b.page), [['Corp SSO', 'ada@example.com']])
  t.same(await axeViolations(b.page), [], 'the account page with a connected account')

  github.script({ id: 583231, login: 'ada', name: 'Ada', emails: [{ email: 'ada@users.noreply.example', primary: true, verified: true }] })
  const [connectedBack] = await Promise.all([b.page.waitForURL(`${origin}/portal/account`), b.page.getByRole('link', { name: 'Connect GitHub' }).click()])
  t.equal(connectedBack, undefined, 'through GitHub and back to the account page')
  t.same(await connected(b.page), [['Corp SSO', 'ada@example.com'], ['GitHub', 'ada@users.noreply.example']])
  t.equal(await b.page.getByRole('link', { name: 'Connect GitHub' }).count(), 0, 'nothing left to connect')

  const removed = await submit(b.page, 'Disconnect Corp SSO (ada@example.com)')
  t.equal(removed?.status(), 200)
  t.equal(b.page.url(), `${origin}/portal/account?done=identity-remove`)
  t.equal(await b.page.getByRole('status').innerText(), 'The account was disconnected. It no longer signs you in.')
  t.same(await connected(b.page), [['GitHub', 'ada@users.noreply.example']])
  t.equal(await b.page.getByRole('link', { name: 'Connect Corp SSO' }).count(), 1, 'Corp SSO may be connected again')

  // no password, no passkey: the last connected account stays
  const refused = await submit(b.page, 'Disconnect GitHub (ada@users.noreply.example)')
  t.equal(refused?.status(), 409)
  t.equal(await b.page.getByRole('alert').innerText(), 'This is the last way to sign in to the account')
  const button = b.page.getByRole('button', { name: 'Disconnect GitHub (ada@users.noreply.example)' })
  t.equal(await b.page.locator(`#${await button.getAttribute('aria-describedby') ?? ''}`).innerText(), 'GitHub is the last way you can sign in to this account. Connect another account first.')
  t.same(await axeViolations(b.page), [], 'the account page refusing the last credential')
  const user = await app.store.users.findByEmail('ada@example.com')
  t.strictSame((await app.store.identities.listOf(user?.id ?? '')).map((i) => [i.provider, i.subject]), [['github', '583231']])
  t.same(b.problems, [], 'no console error, CSP violation or failed load')
})
