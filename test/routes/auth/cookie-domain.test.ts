import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { build, createUser, login, setCookies } from '../../helper.js'
import { PageClient } from '../portal/support.js'

/*
 * COOKIE_DOMAIN (plugins/cookies.ts) on every route that writes an access cookie: /auth/login with
 * remember, /auth/refresh by cookie (routes/auth/login.ts, routes/auth/session.ts) and the portal's
 * sign-in; and every clearing removes both the Domain cookie and a host-only one left from before
 * the setting. The negative control: without COOKIE_DOMAIN, no Domain anywhere.
 */

const PORTAL = 'http://auth.gh.localhost'
const SELF = 'http://localhost:80'
const DOMAIN = { ENABLE_PORTAL: true, PUBLIC_URL: PORTAL, COOKIE_DOMAIN: 'gh.localhost' }

/** Each Set-Cookie as name, Domain (or `host-only`), and whether it sets or clears. */
function written (res: LightMyRequestResponse): string[] {
  return setCookies(res).map((c) => {
    const domain = typeof c.attributes.domain === 'string' ? `Domain=${c.attributes.domain}` : 'host-only'
    return `${c.name} ${domain} ${c.value === '' ? 'cleared' : 'set'}`
  }).sort()
}

async function routes (t: Test, values: Record<string, unknown>): Promise<Record<string, string[]>> {
  const app: FastifyInstance = await build(t, values)
  const user = await createUser(app)
  const signedIn = await login(app, user, { remember: true })
  const refreshed = await app.inject({ method: 'POST', url: '/auth/refresh', cookies: { refresh_token: signedIn.refresh_token }, headers: { origin: SELF } })
  const { refresh_token: refresh } = refreshed.json() as { refresh_token: string }
  const out = await app.inject({ method: 'POST', url: '/auth/logout', cookies: { refresh_token: refresh }, headers: { origin: SELF } })
  const browser = new PageClient(app)
  const portalIn = await browser.post('/portal/login', { email: user.email, password: user.password })
  const portalOut = await browser.post('/portal/logout', { scope: 'local' })
  for (const [what, res, status] of [['login', signedIn.response, 200], ['refresh', refreshed, 200], ['logout', out, 204], ['portal login', portalIn, 303], ['portal logout', portalOut, 303]] as const) {
    t.equal(res.statusCode, status, what)
  }
  return {
    login: written(signedIn.response),
    refresh: written(refreshed),
    logout: written(out),
    portalLogin: written(portalIn).filter((line) => !line.startsWith('__Host-gh_')),
    portalLogout: written(portalOut).filter((line) => !line.startsWith('__Host-gh_'))
  }
}

t.test('with COOKIE_DOMAIN every access cookie carries Domain, and every sign-out clears it and the host-only one', async (t) => {
  t.strictSame(await routes(t, DOMAIN), {
    login: ['access_token Domain=gh.localhost set', 'refresh_token host-only set'],
    refresh: ['access_token Domain=gh.localhost set', 'refresh_token host-only set'],
    logout: ['access_token Domain=gh.localhost cleared', 'access_token host-only cleared', 'refresh_token host-only cleared'],
    portalLogin: ['__Host-refresh_token host-only set', 'access_token Domain=gh.localhost set'],
    portalLogout: ['__Host-refresh_token host-only cleared', 'access_token Domain=gh.localhost cleared', 'access_token host-only cleared']
  })
})

t.test('without COOKIE_DOMAIN no cookie has a Domain (the negative control)', async (t) => {
  t.strictSame(await routes(t, { ENABLE_PORTAL: true, PUBLIC_URL: PORTAL }), {
    login: ['access_token host-only set', 'refresh_token host-only set'],
    refresh: ['access_token host-only set', 'refresh_token host-only set'],
    logout: ['access_token host-only cleared', 'refresh_token host-only cleared'],
    portalLogin: ['__Host-refresh_token host-only set', 'access_token host-only set'],
    portalLogout: ['__Host-refresh_token host-only cleared', 'access_token host-only cleared']
  })
})
