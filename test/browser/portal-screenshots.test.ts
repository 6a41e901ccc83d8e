import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { PAGES, portalSettings } from '../../scripts/portal-pages.js'
import { build } from '../helper.js'
import { ROOT } from '../process/server-process.js'

/*
 * The table of scripts/portal-pages.ts (which test/browser/portal.test.ts checks in Chromium and
 * scripts/portal-screenshots.ts photographs) names every page the portal serves to a browser, and
 * docs/portal.md shows a committed picture of every row.
 */

/** GET routes under /portal that are no page of their own: the hashed assets, the QR image. */
const NOT_PAGES = [/^\/portal\/assets\//, /\.svg$/]

/** The GET routes of the portal with every page switched on, as registered. */
async function portalPages (t: Parameters<typeof build>[0]): Promise<string[]> {
  const app = await build(t, portalSettings('http://auth.gh.localhost'))
  // a tree, one segment a line, indented four characters a level: `│   └── /verify (GET)`
  const routes: string[] = []
  const stack: string[] = []
  for (const [, indent = '', segment = ''] of app.printRoutes({ commonPrefix: false, method: 'GET' }).matchAll(/^([│ ]*)[├└]── (\S+)/gm)) {
    const depth = indent.length / 4
    stack[depth] = `${depth === 0 ? '' : stack[depth - 1] ?? ''}${segment}`
    stack.length = depth + 1
    if (stack[depth]?.startsWith('/portal/') === true) routes.push(stack[depth] ?? '')
  }
  return [...new Set(routes)].filter((url) => !NOT_PAGES.some((re) => re.test(url))).sort()
}

/** The pages no row of `pages` reaches (a 404 row is no page). */
function missing (served: string[], pages: Array<{ route: string }>): string[] {
  return served.filter((route) => !pages.some((p) => p.route === route))
}

t.test('every page the portal serves to a browser has a row in scripts/portal-pages.ts', async (t) => {
  const served = await portalPages(t)
  t.ok(served.includes('/portal/login'), `the routes are read: ${served.join(' ')}`)
  t.same(missing(served, PAGES), [])
  // the negative control: a table without the sign-in page's rows misses it
  t.same(missing(served, PAGES.filter((p) => p.route !== '/portal/login')), ['/portal/login'])
})

t.test('docs/portal.md shows the committed picture of every row', async (t) => {
  const doc = readFileSync(join(ROOT, 'docs', 'portal.md'), 'utf8')
  for (const { name } of PAGES) {
    t.ok(doc.includes(`](portal/${name}.png)`), `docs/portal.md shows portal/${name}.png`)
    t.ok(existsSync(join(ROOT, 'docs', 'portal', `${name}.png`)), `docs/portal/${name}.png is committed (npm run docs:screenshots)`)
  }
})
