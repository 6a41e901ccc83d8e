import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import axe from 'axe-core'
import type { FastifyInstance } from 'fastify'
import { chromium, type Browser, type Page } from 'playwright-core'
import type { TestContext } from '../../helper.js'
import { portalApp } from './support.js'

/*
 * The portal's pages in Debian's Chromium, for what only a browser shows: the scripts under
 * /portal/assets/ run under the pages' CSP, forms post as a browser posts them, and axe-core
 * (injected through the DevTools protocol, which the CSP does not govern) judges each page.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

export async function launchChromium (t: TestContext): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it (apt-get install -y chromium) or set CHROMIUM_PATH`)
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS })
  t.teardown(() => browser.close())
  return browser
}

export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** A portal listening on 127.0.0.1 under a `*.localhost` name (Chromium resolves those to loopback), PUBLIC_URL included. */
export async function listeningPortal (t: TestContext, values: Record<string, unknown> = {}, build = portalApp): Promise<{ app: FastifyInstance, origin: string }> {
  const port = await freePort()
  const origin = `http://auth.gh.localhost:${port}`
  const app = await build(t, { PUBLIC_URL: origin, ...values })
  await app.listen({ host: '127.0.0.1', port })
  return { app, origin }
}

/** axe-core's serious and critical violations of the page as it is now, as `rule: selectors`. */
export async function axeViolations (page: Page): Promise<string[]> {
  await page.evaluate(axe.source)
  const found = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: () => Promise<{ violations: Array<{ id: string, impact: string | null, nodes: Array<{ target: unknown[] }> }> }> } }).axe
    return (await axe.run()).violations
  })
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
}

/**
 * Every Content-Security-Policy violation, script error and failed script, style sheet or image of
 * the page (a page's own 4xx status is an answer the test asserts, and the favicon is not the portal's).
 */
export function pageProblems (page: Page): string[] {
  const problems: string[] = []
  page.on('console', (message) => { if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text()) })
  page.on('pageerror', (err) => { problems.push(err.message) })
  page.on('response', (response) => {
    const request = response.request()
    if (request.resourceType() !== 'document' && response.status() >= 400 && !request.url().endsWith('/favicon.ico')) problems.push(`${response.status()} ${request.url()}`)
  })
  return problems
}
