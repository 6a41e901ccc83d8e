import { existsSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { chromium, type Browser } from 'playwright-core'
import t from 'tap'
import { build } from '../helper.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

/** A missing browser is a failure, never a skip: the page is part of the contract (docs/api.md#routes). */
async function launch (): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it (apt-get install -y chromium) or set CHROMIUM_PATH`)
  return await chromium.launch({ executablePath: CHROMIUM, args: ARGS })
}

t.test('GET /docs renders every operation in Chromium, offline and within its CSP', async (t) => {
  const app = await build(t)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const origin = `http://127.0.0.1:${port}`

  const browser = await launch()
  t.teardown(() => browser.close())
  const page = await browser.newPage()
  const requests: string[] = []
  const problems: string[] = []
  page.on('request', (request) => { requests.push(request.url()) })
  page.on('console', (message) => { if (message.type() === 'error' || message.type() === 'warning') problems.push(`${message.type()}: ${message.text()}`) })
  page.on('pageerror', (err) => { problems.push(`pageerror: ${err.message}`) })
  page.on('requestfailed', (request) => { problems.push(`failed: ${request.url()} ${request.failure()?.errorText ?? ''}`) })

  const response = await page.goto(`${origin}/docs`, { waitUntil: 'networkidle' })
  t.equal(response?.status(), 200)
  t.match(response?.headers()['content-security-policy'], /^default-src 'none'; script-src 'self'; style-src 'self' 'sha256-/)

  const login = page.locator('.opblock-post .opblock-summary-path[data-path="/auth/login"]')
  const users = page.locator('.opblock-get .opblock-summary-path[data-path="/api/users"]')
  await login.waitFor({ timeout: 30_000 })
  t.equal(await login.count(), 1, 'POST /auth/login is listed')
  t.equal(await users.count(), 1, 'GET /api/users is listed')
  t.equal(await page.locator('.opblock-summary-operation-id', { hasText: /^postAuthLogin$/ }).count(), 1, 'with its operationId')
  t.equal(await page.title(), 'gatehouse API')

  // an opened operation renders its schemas and highlighted examples, which must pass the CSP too
  await login.click()
  const opened = page.locator('#operations-auth-postAuthLogin')
  await opened.locator('.responses-table').waitFor({ timeout: 30_000 })
  t.match(await opened.locator('.responses-table').innerText(), /Too Many Requests/)
  await page.waitForLoadState('networkidle')

  t.same(problems, [], 'no console errors, CSP violations or failed loads')
  t.ok(requests.length > 3, 'the page loaded its assets')
  t.same(requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:')), [], 'no request leaves 127.0.0.1')
})
