// `npm run docs:screenshots`: a PNG of every page and main error state of the portal
// (scripts/portal-pages.ts) into docs/portal/, for docs/portal.md. Starts gatehouse in this process
// on a temporary data folder with every page on, seeds the demo users, and drives Debian's
// Chromium (CHROMIUM_PATH) through each row. test/browser/portal-screenshots.test.ts checks that
// the rows cover every page and that docs/portal.md shows each picture.
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config/config.js'
import { PAGES, portalSettings, seedDemo } from './portal-pages.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
const OUT = join(import.meta.dirname, '..', 'docs', 'portal')

async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer().once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => { typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')) })
    })
  })
}

const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-screenshots-'))
const port = await freePort()
const origin = `http://auth.gh.localhost:${port}`
const app = await buildApp(loadConfig({
  fromEnvironment: false,
  values: { ...portalSettings(origin), DATA_DIR: dataDir, JWT_SECRET: randomBytes(32).toString('base64'), LOG_LEVEL: 'silent' }
}))
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS })
try {
  await app.listen({ host: '127.0.0.1', port })
  const demo = await seedDemo(app, origin)
  mkdirSync(OUT, { recursive: true })
  for (const state of PAGES) {
    const context = await browser.newContext({ viewport: { width: state.width, height: 640 }, colorScheme: 'light' })
    const page = await context.newPage()
    const response = await state.reach(page, demo)
    if (response?.status() !== state.status) throw new Error(`${state.name}: ${response?.status() ?? 'no answer'}, not ${state.status}, at ${page.url()}`)
    await page.screenshot({ path: join(OUT, `${state.name}.png`), fullPage: true })
    await context.close()
    process.stdout.write(`docs/portal/${state.name}.png (${state.width} px)\n`)
  }
} finally {
  await browser.close()
  await app.close()
  rmSync(dataDir, { recursive: true, force: true })
}
