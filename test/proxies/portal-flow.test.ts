import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import t, { type Test } from 'tap'
import { authHeader, build, createUser, login, tempDir } from '../helper.js'
import { UUID } from '../patterns.js'
import { fencedBlock, freePort, nginxParts, replaced, send, startCaddy, startNginx } from './support.js'

/*
 * The browser flow of docs/proxies.md (routes/auth/verify.ts with FORWARD_AUTH_REDIRECT, the
 * portal's routes/portal/login.ts, logout.ts and two-factor.ts) in Debian's Chromium, through the
 * real nginx and Caddy with the document's configurations: the application (a tiny echo server)
 * on app.gh.localhost, gatehouse's pages on auth.gh.localhost, both behind the same proxy, the
 * access cookie on COOKIE_DOMAIN=gh.localhost. One Chromium for the file, a fresh profile per leg.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
const DATA_KEY = `t1:${Buffer.alloc(32, 9).toString('base64')}`
const MISSING = { error: 'Unauthorized', message: 'An access token is required', code: 'token_missing' }

interface Seen { url: string, identity: Record<string, string>, cookie: string | undefined }
interface Echo { port: number, seen: Seen[] }

const escapeHtml = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')

/**
 * The application: a page showing the identity headers it received (JSON in `#echo`), the same as
 * JSON at /data, and, reached directly (another origin), a page framing the URL in `?src=`. Its
 * page has a password field (no form) as the sign-in page has: the frame test's control.
 */
async function startEcho (t: Test): Promise<Echo> {
  const seen: Seen[] = []
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/'
    const identity = Object.fromEntries(Object.entries(req.headers).filter(([name]) => name.startsWith('x-auth-'))) as Record<string, string>
    seen.push({ url, identity, cookie: req.headers.cookie })
    const echo = JSON.stringify({ url, identity })
    if (url.startsWith('/data')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(echo)
      return
    }
    const src = new URL(url, 'http://x').searchParams.get('src')
    const body = url.startsWith('/frame') && src !== null
      ? `<iframe src="${escapeHtml(src)}" title="framed"></iframe>`
      : `<h1>The application</h1><pre id="echo">${escapeHtml(echo)}</pre><label>Probe <input type="password"></label>`
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html lang="en"><title>echo</title>${body}</html>`)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve) }))
  return { port: (server.address() as AddressInfo).port, seen }
}

interface Flow { gatehouse: FastifyInstance, echo: Echo, port: number, adminPort: number, app: string, admin: string, portal: string }

/** gatehouse as docs/proxies.md runs it, its PUBLIC_URL on the proxy's port; listening for real. */
async function startGatehouse (t: Test, port: number): Promise<FastifyInstance> {
  const gatehouse = await build(t, {
    ENABLE_PORTAL: true,
    PUBLIC_URL: `http://auth.gh.localhost:${port}`,
    COOKIE_DOMAIN: 'gh.localhost',
    FORWARD_AUTH_REDIRECT: true,
    TRUST_PROXY: '127.0.0.1',
    ACCESS_TOKEN_TTL: '3s',
    ENABLE_TOTP: true,
    DATA_ENCRYPTION_KEYS: DATA_KEY
  })
  await gatehouse.listen({ host: '127.0.0.1', port: 0 })
  return gatehouse
}

function gatehousePort (gatehouse: FastifyInstance): number {
  return (gatehouse.server.address() as AddressInfo).port
}

async function flowOn (t: Test, start: (flow: Omit<Flow, 'app' | 'admin' | 'portal'>) => Promise<void>): Promise<Flow> {
  const [port = 0, adminPort = 0] = await Promise.all([freePort(), freePort()])
  const gatehouse = await startGatehouse(t, port)
  const echo = await startEcho(t)
  await start({ gatehouse, echo, port, adminPort })
  return {
    gatehouse,
    echo,
    port,
    adminPort,
    app: `http://app.gh.localhost:${port}`,
    admin: `http://app.gh.localhost:${adminPort}`,
    portal: `http://auth.gh.localhost:${port}`
  }
}

/** The document's nginx servers on `port`, with the names of this test, and the one change a non-default port needs. */
function nginxServers (servers: string, port: number, flow: Pick<Flow, 'echo'>, forwardedHost = '$http_host'): string {
  let text = replaced(servers, 'listen 80;', `listen 127.0.0.1:${port};`)
  text = replaced(text, 'server_name app.example.com;', 'server_name app.gh.localhost;')
  text = replaced(text, 'server_name auth.example.com;', 'server_name auth.gh.localhost;')
  text = replaced(text, 'proxy_set_header X-Forwarded-Host   $host;', `proxy_set_header X-Forwarded-Host   ${forwardedHost};`)
  return replaced(text, '127.0.0.1:8080', `127.0.0.1:${flow.echo.port}`)
}

function caddySites (block: string, port: number, flow: Pick<Flow, 'echo' | 'gatehouse'>): string {
  let text = replaced(block, 'app.example.com {', `http://app.gh.localhost:${port} {`)
  text = replaced(text, 'auth.example.com {', `http://auth.gh.localhost:${port} {`)
  text = replaced(text, '127.0.0.1:3000', `127.0.0.1:${gatehousePort(flow.gatehouse)}`)
  return replaced(text, '127.0.0.1:8080', `127.0.0.1:${flow.echo.port}`)
}

interface Document { status: number, url: string, form?: boolean }

/** Every document response of the page's main frame, redirects included, with whether a 200 showed a form. */
function recordDocuments (page: Page): { list: Document[], settled: () => Promise<void> } {
  const list: Document[] = []
  const pending: Promise<void>[] = []
  page.on('response', (response) => {
    if (response.request().resourceType() !== 'document' || response.frame() !== page.mainFrame()) return
    const entry: Document = { status: response.status(), url: response.url() }
    list.push(entry)
    if (entry.status < 300 || entry.status >= 400) pending.push(response.text().then((html) => { entry.form = html.includes('<form') }, () => {}))
  })
  return { list, settled: async () => { await Promise.all(pending) } }
}

async function echoOf (page: Page): Promise<{ url: string, identity: Record<string, string> }> {
  return JSON.parse(await page.textContent('#echo') ?? 'null') as { url: string, identity: Record<string, string> }
}

async function signInThroughForm (page: Page, email: string, password: string): Promise<void> {
  await page.fill('input[name=email]', email)
  await page.fill('input[name=password]', password)
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')])
}

/** What a script of the application's page gets from a same-origin fetch (Sec-Fetch-Mode: cors). */
async function fetchFrom (page: Page, path: string): Promise<{ status: number, redirected: boolean, url: string, body: string }> {
  return await page.evaluate(async (path) => {
    const res = await fetch(path)
    return { status: res.status, redirected: res.redirected, url: res.url, body: await res.text() }
  }, path)
}

async function accessCookies (context: BrowserContext): Promise<{ domain: string }[]> {
  return (await context.cookies()).filter((c) => c.name === 'access_token').map((c) => ({ domain: c.domain }))
}

/** Waits, without a request, until the browser has dropped the access cookie (Max-Age = ACCESS_TOKEN_TTL). */
async function accessCookieExpired (context: BrowserContext): Promise<void> {
  for (let i = 0; i < 100 && (await accessCookies(context)).length > 0; i++) await sleep(100)
}

/**
 * The whole flow for one proxy. `nginx`: auth_request never passes gatehouse's body on, so a
 * script's fetch gets nginx's own 401 page, not gatehouse's JSON.
 */
async function assertFlow (t: Test, browser: Browser, flow: Flow, nginx: boolean): Promise<void> {
  const user = await createUser(flow.gatehouse, { roles: ['user'] })
  const context = await browser.newContext()
  t.teardown(() => context.close())
  const page = await context.newPage()
  const documents = recordDocuments(page)

  // 1. the application's URL with a query → the sign-in page → signed in → back on that URL
  const target = `${flow.app}/page?q=one&two=2`
  await page.goto(target)
  const signIn = new URL(page.url())
  t.equal(`${signIn.origin}${signIn.pathname}`, `${flow.portal}/portal/login`, 'sent to the sign-in page')
  t.equal(signIn.searchParams.get('rd'), target, 'carrying the application\'s URL, query included')
  await signInThroughForm(page, user.email, user.password)
  t.equal(page.url(), target, 'back on the original URL')
  await documents.settled()
  const login = `${flow.portal}/portal/login?rd=${encodeURIComponent(target)}`
  // the record sees the sign-in form where there is one: the control of step 3's "no form"
  t.strictSame(documents.list, [
    { status: 302, url: target },
    { status: 200, url: login, form: true },
    { status: 303, url: `${flow.portal}/portal/login` },
    { status: 200, url: target, form: false }
  ], 'the redirect, the sign-in form, its 303, the application')
  const seen = await echoOf(page)
  const sessionId = seen.identity['x-auth-session-id']
  t.match(sessionId, UUID)
  t.strictSame(seen, {
    url: '/page?q=one&two=2',
    identity: { 'x-auth-user-id': user.id, 'x-auth-email': user.email, 'x-auth-roles': 'user', 'x-auth-session-id': sessionId, 'x-auth-superuser': 'false' }
  }, 'the application saw the identity')
  t.strictSame(await accessCookies(context), [{ domain: '.gh.localhost' }], 'the access cookie is COOKIE_DOMAIN\'s')
  t.match(flow.echo.seen.at(-1)?.cookie, /(^|; )access_token=/, 'and the application received it')

  // 2. a role-gated location: 403 at once, never a redirect
  documents.list.length = 0
  const gated = await page.goto(`${flow.admin}/admin?x=1`)
  t.equal(gated?.status(), 403)
  t.strictSame(documents.list.map((d) => d.status), [403], 'one request, no redirect')
  t.equal(gated?.headers()['content-type'], 'text/html; charset=utf-8')
  t.match(await page.textContent('main'), `You are signed in as ${user.email}.`, 'gatehouse\'s forbidden page')
  t.match(await page.textContent('main'), 'Your account does not have a role this page needs.')
  t.match(await page.textContent('.roles'), 'admin', 'naming the role that would pass')
  // main has no max-width without a style sheet: the portal's, from PUBLIC_URL, is allowed by the page's policy and applied
  t.equal(await page.evaluate('getComputedStyle(document.querySelector("main")).maxWidth'), '416px', 'with the portal\'s style sheet')

  // 3. the access token's lifetime passes: the next navigation renews it silently, no form on any page
  await accessCookieExpired(context)
  t.strictSame(await accessCookies(context), [], 'the browser dropped the expired access cookie')
  documents.list.length = 0
  const again = `${flow.app}/again?x=1`
  await page.goto(again)
  await documents.settled()
  t.equal(page.url(), again, 'back on the application')
  t.strictSame(documents.list, [
    { status: 302, url: again },
    { status: 303, url: `${flow.portal}/portal/login?rd=${encodeURIComponent(again)}` },
    { status: 200, url: again, form: false }
  ], 'the verify redirect, the silent refresh (no form), the application')
  t.equal((await echoOf(page)).identity['x-auth-user-id'], user.id)

  // 4. a script's fetch keeps the 401: signed in it passes (the control), signed out it is refused, not redirected
  const tab = await context.newPage()
  await tab.goto(`${flow.app}/tab`)
  const before = await fetchFrom(tab, '/data?fetch=1')
  t.equal(before.status, 200, 'signed in, the fetch passes')
  t.equal((JSON.parse(before.body) as Seen).identity['x-auth-user-id'], user.id)

  // 5. logout removes the Domain cookie the application saw
  await page.goto(`${flow.portal}/portal/logout?rd=${encodeURIComponent(`${flow.portal}/portal/login`)}`)
  await Promise.all([page.waitForNavigation(), page.click('button[value=local]')])
  t.strictSame(await accessCookies(context), [], 'no access cookie left')
  const after = await fetchFrom(tab, '/data?fetch=2')
  t.equal(after.status, 401, 'signed out, the fetch is refused')
  t.equal(after.redirected, false, 'not redirected')
  t.equal(after.url, `${flow.app}/data?fetch=2`)
  if (!nginx) t.same(JSON.parse(after.body), MISSING, 'gatehouse\'s JSON, passed on')
  await page.goto(target)
  t.equal(new URL(page.url()).pathname, '/portal/login', 'the application sends the browser to sign in again')
}

/** Debian's oathtool: the TOTP code of `secret` (base32) at `atMs`. */
function oathtool (secret: string, atMs: number): string {
  return execFileSync('oathtool', ['--totp', '-b', secret, '--now', `@${Math.floor(atMs / 1000)}`], { encoding: 'utf8' }).trim()
}

/** A user with TOTP on, enrolled through the JSON API with oathtool's code. */
async function totpUser (gatehouse: FastifyInstance): Promise<{ id: string, email: string, password: string, secret: string }> {
  const user = await createUser(gatehouse)
  const { access_token: token } = await login(gatehouse, user)
  const enrol = await gatehouse.inject({ method: 'POST', url: '/auth/enable-2fa', headers: authHeader(token), payload: { password: user.password } })
  const { secret } = enrol.json() as { secret: string }
  const confirm = await gatehouse.inject({ method: 'POST', url: '/auth/verify-2fa', headers: authHeader(token), payload: { code: oathtool(secret, Date.now()) } })
  if (confirm.statusCode !== 200) throw new Error(`verify-2fa: ${confirm.statusCode} ${confirm.body}`)
  return { ...user, secret }
}

/** The second factor on the way back: password, then /portal/2fa with oathtool's code, then the application. */
async function assertTotpLeg (t: Test, browser: Browser, flow: Flow): Promise<void> {
  const user = await totpUser(flow.gatehouse)
  const context = await browser.newContext()
  t.teardown(() => context.close())
  const page = await context.newPage()
  const target = `${flow.app}/totp?step=2`
  await page.goto(target)
  await signInThroughForm(page, user.email, user.password)
  t.equal(page.url(), `${flow.portal}/portal/2fa`, 'the second step')
  // the next time step's code: the enrolment spent this one's (the window takes one step either side)
  await page.fill('input[name=code]', oathtool(user.secret, Date.now() + 30_000))
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')])
  t.equal(page.url(), target, 'back on the original URL')
  t.equal((await echoOf(page)).identity['x-auth-user-id'], user.id)
}

/** A portal page framed by a page of another origin does not render; the same frame of a page without the headers does (the control). */
async function assertNotFramed (t: Test, browser: Browser, flow: Flow): Promise<void> {
  const context = await browser.newContext()
  t.teardown(() => context.close())
  const page = await context.newPage()
  /** What the frame shows: its title, and whether it has a password field. */
  const framed = async (src: string): Promise<{ title: string, password: boolean } | undefined> => {
    await page.goto(`http://127.0.0.1:${flow.echo.port}/frame?src=${encodeURIComponent(src)}`)
    const frame = page.frames().find((f) => f !== page.mainFrame())
    await frame?.waitForLoadState()
    return await frame?.evaluate('({ title: document.title, password: document.querySelector("input[type=password]") !== null })') as { title: string, password: boolean } | undefined
  }
  const portalPage = await send(flow.port, 'GET', '/portal/login', { host: `auth.gh.localhost:${flow.port}` })
  t.match(portalPage.body, '<title>Sign in – gatehouse</title>', 'the page, unframed, has its title and form')
  const refused = await framed(`${flow.portal}/portal/login`)
  t.equal(refused?.password, false, 'the framed sign-in page shows no password field')
  t.notMatch(refused?.title, 'Sign in', 'nor its title')
  t.strictSame(await framed(`http://127.0.0.1:${flow.echo.port}/page`), { title: 'echo', password: true }, 'the control: a page without the headers renders in the frame')
}

const browser = await (async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it (apt-get install -y chromium) or set CHROMIUM_PATH`)
  return await chromium.launch({ executablePath: CHROMIUM, args: ARGS })
})()
t.teardown(() => browser.close())

t.test('the browser flow through nginx with the configuration of docs/proxies.md', async (t) => {
  const dir = tempDir(t)
  const [portless = 0, unsent = 0] = await Promise.all([freePort(), freePort()])
  const flow = await flowOn(t, async ({ gatehouse, echo, port, adminPort }) => {
    const { upstream, servers } = nginxParts()
    const http = [
      replaced(upstream, '127.0.0.1:3000', `127.0.0.1:${gatehousePort(gatehouse)}`),
      nginxServers(servers, port, { echo }),
      nginxServers(replaced(servers, '?mode=auth_request&roles=;', '?mode=auth_request&roles=admin;'), adminPort, { echo }),
      // the negative control of $http_host: the document's $host, on a non-default port
      nginxServers(servers, portless, { echo }, '$host'),
      // and of @gh_signin: the document's servers without the error_page line that sends a 401 there
      nginxServers(replaced(servers, 'error_page 401 = @gh_signin;', ''), unsent, { echo })
    ].join('\n')
    await startNginx(t, dir, http, [port, adminPort, portless, unsent])
  })
  await assertFlow(t, browser, flow, true)
  await assertTotpLeg(t, browser, flow)
  await assertNotFramed(t, browser, flow)

  const navigate = { 'sec-fetch-mode': 'navigate', accept: 'text/html' }
  const kept = await send(flow.port, 'GET', '/p?a=1', { ...navigate, host: `app.gh.localhost:${flow.port}` })
  t.equal(kept.headers.location, `${flow.portal}/portal/login?rd=${encodeURIComponent(`${flow.app}/p?a=1`)}`, '$http_host keeps the port')
  const lost = await send(portless, 'GET', '/p?a=1', { ...navigate, host: `app.gh.localhost:${portless}` })
  t.equal(lost.headers.location, `${flow.portal}/portal/login?rd=${encodeURIComponent('http://app.gh.localhost/p?a=1')}`, 'negative control: $host loses it')
  t.equal(kept.status, 302, 'the 401 with a Location becomes a 302')
  const stays = await send(unsent, 'GET', '/p?a=1', { ...navigate, host: `app.gh.localhost:${unsent}` })
  t.equal(stays.status, 401, 'negative control: without error_page 401 = @gh_signin, nginx answers the navigation 401')
  t.equal(stays.headers.location, undefined)
})

t.test('the browser flow through Caddy with the configuration of docs/proxies.md', async (t) => {
  const dir = tempDir(t)
  const flow = await flowOn(t, async ({ gatehouse, echo, port, adminPort }) => {
    const block = fencedBlock('caddyfile')
    const admin = replaced(block, 'uri /auth/verify?mode=forward_auth\n', 'uri /auth/verify?mode=forward_auth&roles=admin\n')
    await startCaddy(t, dir, [caddySites(block, port, { echo, gatehouse }), caddySites(admin, adminPort, { echo, gatehouse })].join('\n'), [port, adminPort])
  })
  await assertFlow(t, browser, flow, false)
  await assertTotpLeg(t, browser, flow)
})
