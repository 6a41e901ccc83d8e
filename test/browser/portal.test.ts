import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import t from 'tap'
import { HOSTILE, PAGES, portalSettings, seedDemo, signIn, submit, type Demo } from '../../scripts/portal-pages.js'
import { build, type TestContext } from '../helper.js'
import { freePort } from '../mail/aiosmtpd.js'
import { PAGE_HEADERS } from '../routes/portal/support.js'
import { startCaptureServer } from '../mail/smtp-capture.js'

/*
 * The portal's pages (routes/portal/, src/portal/templates/) in Debian's Chromium against a real
 * listening server with every page switched on (mail to a real SMTP server in this process): each
 * page and error state of scripts/portal-pages.ts answers its status, has no serious or critical
 * axe-core violation and no console error (a CSP violation is one); a browser without JavaScript
 * signs in; hostile names and hints show as text.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js')

interface AxeViolation { id: string, impact: string | null, help: string, nodes: Array<{ target: unknown[], failureSummary?: string }> }

async function launch (): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it (apt-get install -y chromium) or set CHROMIUM_PATH`)
  return await chromium.launch({ executablePath: CHROMIUM, args: ARGS })
}

/** The portal on http://auth.gh.localhost:<port>, listening on loopback, with `names` for the demo users. */
async function portal (t: TestContext, names: { user?: string, totp?: string } = {}): Promise<Demo> {
  const port = await freePort()
  const origin = `http://auth.gh.localhost:${port}`
  const mail = await startCaptureServer(t)
  const app = await build(t, { ...portalSettings(origin), SMTP_URL: mail.url })
  await app.listen({ host: '127.0.0.1', port })
  return await seedDemo(app, origin, names)
}

/**
 * A page whose console errors and warnings, page errors, dialogs and failed subresources are
 * collected in `problems`. Chromium also logs every 4xx/5xx answer as "Failed to load resource":
 * the document's status is asserted by each test, and /favicon.ico is the browser's own request
 * (the pages name no icon), so those two are left out; any other failed load is a problem.
 */
async function watchedPage (context: BrowserContext, problems: string[]): Promise<Page> {
  const page = await context.newPage()
  page.on('console', (message) => {
    if (message.type() !== 'error' && message.type() !== 'warning') return
    if (message.text().startsWith('Failed to load resource:')) return
    problems.push(`${message.type()}: ${message.text()}`)
  })
  page.on('response', (response) => {
    const request = response.request()
    if (response.status() >= 400 && !request.isNavigationRequest() && new URL(response.url()).pathname !== '/favicon.ico') problems.push(`failed: ${response.status()} ${response.url()}`)
  })
  page.on('pageerror', (err) => { problems.push(`pageerror: ${err.message}`) })
  page.on('dialog', (dialog) => { problems.push(`dialog: ${dialog.message()}`); dialog.dismiss().catch(() => {}) })
  return page
}

/** axe-core's serious and critical violations of the page as it stands, one line each. */
async function seriousViolations (page: Page): Promise<string[]> {
  // page scripts are strings: the test project compiles without the DOM's types
  const violations = await page.evaluate<AxeViolation[]>('axe.run(document).then((result) => result.violations)')
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact ?? ''} ${v.id}: ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`)
}

const browser = await launch()
t.teardown(() => browser.close())

t.test('every page and error state: its status, no serious or critical axe-core violation, no console error or CSP violation', async (t) => {
  const demo = await portal(t)
  for (const state of PAGES) {
    await t.test(state.name, async (t) => {
      const context = await browser.newContext()
      t.teardown(() => context.close())
      // axe-core comes in as an init script, which Chromium runs through DevTools outside the page's
      // CSP: the policy stays enforced for everything the page itself loads (no bypassCSP), so the
      // console check below still sees every violation a visitor's browser would report
      await context.addInitScript({ path: AXE })
      const problems: string[] = []
      const page = await watchedPage(context, problems)
      const response = await state.reach(page, demo)
      t.equal(response?.status(), state.status, `${state.name}: ${page.url()}`)
      t.match(response?.headers(), PAGE_HEADERS, 'the pages\' CSP, framing, referrer and cache headers')
      t.same(await seriousViolations(page), [], 'no serious or critical axe-core violation')
      t.same(problems, [], 'no console error, CSP violation or dialog')
    })
  }
})

t.test('the axe check and the console check can fail (negative controls)', async (t) => {
  const demo = await portal(t)
  const context = await browser.newContext()
  t.teardown(() => context.close())
  await context.addInitScript({ path: AXE })
  const problems: string[] = []
  const page = await watchedPage(context, problems)
  await page.goto(`${demo.origin}/portal/login`)
  // an unlabelled control, as a template without the field partial would render it
  await page.evaluate('document.querySelector("label").remove()')
  t.match(await seriousViolations(page), [/^critical label: /], 'a control without its label is reported')
  // an inline script, as a template that printed one would carry: the CSP refuses it and says so
  await page.evaluate('document.body.append(Object.assign(document.createElement("script"), { textContent: "document.title = \'ran\'" }))')
  await page.waitForTimeout(100)
  t.not(await page.title(), 'ran', 'the inline script did not run')
  t.ok(problems.some((p) => p.includes('violates the following Content Security Policy directive')), 'the refusal reaches the console check')

  // a page that printed the hostile strings raw: the element check finds what they make
  await page.setContent(`<main><p>${HOSTILE.join('</p><p>')}</p></main>`)
  t.equal(await page.locator('img, svg, body script').count(), 3, 'printed raw, each string makes an element')
})

t.test('without JavaScript a browser signs in: the form posts, the cookies are set, the 303 lands on the return URL', async (t) => {
  const demo = await portal(t)
  const context = await browser.newContext({ javaScriptEnabled: false })
  t.teardown(() => context.close())
  const page = await context.newPage()
  const rd = `${demo.origin}/auth/me`
  const response = await signIn(page, demo, demo.user, `?rd=${encodeURIComponent(rd)}`)
  t.equal(page.url(), rd)
  t.equal(response?.status(), 200)
  t.match(JSON.parse(await page.locator('body').innerText()), { email: demo.user.email, name: demo.user.name }, '/auth/me reads the portal\'s access_token cookie')
  const names = (await context.cookies()).map((c) => c.name).sort()
  t.same(names, ['__Host-gh_csrf', '__Host-refresh_token', 'access_token'])
  await page.setContent('<title>before</title><script>document.title = "ran"</script>')
  t.equal(await page.title(), 'before', 'the context really runs no page script')
})

t.test('hostile names and login hints show as text, verbatim, and run nothing', async (t) => {
  for (const [i, hostile] of HOSTILE.entries()) {
    await t.test(hostile, async (t) => {
      const demo = await portal(t, { user: hostile, totp: hostile })
      const context = await browser.newContext()
      t.teardown(() => context.close())
      const problems: string[] = []
      const page = await watchedPage(context, problems)

      await page.goto(`${demo.origin}/portal/login?login_hint=${encodeURIComponent(hostile)}`)
      t.equal(await page.getByLabel('Email').inputValue(), hostile, 'the login_hint prefill keeps the text')
      t.equal(await page.locator('img, svg, body script').count(), 0, 'no element came out of it')

      await signIn(page, demo, { email: demo.user.email, password: 'wrong' }, `?login_hint=${encodeURIComponent(hostile)}`)
      t.equal(await page.getByLabel('Email').inputValue(), demo.user.email)

      // the account page names the signed-in user; the forbidden page shows who is signed in, and
      // takes its reason and roles from the query, which a link can fill with anything
      await signIn(page, demo, demo.user)
      t.equal(new URL(page.url()).pathname, '/portal/account')
      t.equal(await page.locator('main p strong').first().innerText(), hostile, 'the account page shows the name as text')
      const forbidden = await page.goto(`${demo.origin}/portal/forbidden?reason=${encodeURIComponent(hostile)}&roles=${encodeURIComponent(hostile)}&rd=${encodeURIComponent(hostile)}`)
      t.equal(forbidden?.status(), 403)
      t.notOk((await page.locator('main').innerHTML()).includes(hostile), 'the forbidden page prints no markup from its query')
      t.equal(await page.locator('img, svg, body script').count(), 0)

      // the second step of a user whose name is hostile
      await page.context().clearCookies()
      await signIn(page, demo, demo.totpUser)
      t.equal(new URL(page.url()).pathname, '/portal/2fa')
      t.equal(await page.locator('img, svg, body script').count(), 0)

      // a 422 fills the form in again: the name as typed
      await page.goto(`${demo.origin}/portal/register`)
      await page.evaluate('document.querySelector("form").noValidate = true')
      await page.getByLabel('Name').fill(hostile)
      await page.getByLabel('Email').fill('not-an-address')
      t.equal((await submit(page))?.status(), 422)
      t.equal(await page.getByLabel('Name').inputValue(), hostile, 'the register page keeps the name as text')
      t.equal(await page.locator('img, svg, body script').count(), 0)
      t.same(problems, [], `no dialog (${i})`)
    })
  }
})
