import t from 'tap'
import { tempDir } from '../helper.js'
import { launchChromium, pageProblems } from '../routes/portal/chromium.js'
import { startApache } from './apache.js'
import { freePort } from '../redis/helper.js'
import { createClient, listeningProvider, portalUser } from './support.js'

/*
 * Apache httpd with mod_auth_openidc (Debian's apache2, libapache2-mod-auth-openidc) as a relying
 * party of gatehouse's provider (routes/oauth2/, the portal's sign-in and consent pages), in
 * Debian's Chromium: the protected page of the application sends the browser to gatehouse, the
 * user signs in and consents, mod_auth_openidc redeems the code, validates the ID token through
 * the JWKS and calls userinfo, and its CGI shows the claims; its logout goes through
 * end_session_endpoint and ends the portal session too. gatehouse is auth.gh.localhost (its
 * pages' cookies need a secure context: Chromium counts http on *.localhost as one), Apache is
 * localhost (the provider allows http redirect URIs on loopback and localhost only).
 */

t.test('Chromium → Apache (mod_auth_openidc) → the portal → Apache: the claims, then the logout', async (t) => {
  const provider = await listeningProvider(t, {}, 'auth.gh.localhost')
  const user = await portalUser(provider, { email: 'grace@example.com', name: 'Grace Hopper', roles: ['editor', 'viewer'] })
  const port = await freePort()
  const client = await createClient(provider, {
    name: 'The wiki',
    redirect_uris: [`http://localhost:${port}/protected/callback`],
    post_logout_redirect_uris: [`http://localhost:${port}/logged-out`],
    scopes: ['openid', 'profile', 'email', 'roles']
  })
  const rp = await startApache(t, tempDir(t), { issuer: provider.issuer, clientId: client.client_id, clientSecret: client.client_secret ?? '', port, scope: 'openid profile email roles' })
  const browser = await launchChromium(t)
  const page = await (await browser.newContext()).newPage()
  const problems = pageProblems(page)

  // the protected page, unauthenticated: to gatehouse's sign-in page (the negative control: no claims without it)
  await page.goto(rp.claimsUrl)
  t.match(page.url(), `${provider.issuer}/portal/login?`, 'at the sign-in page')
  await page.fill('input[name="email"]', user.email, { timeout: 5000 })
  await page.fill('input[name="password"]', user.password)
  await page.click('button[type="submit"]')
  await page.waitForURL(`${provider.issuer}/portal/consent?**`)
  t.match(await page.textContent('body'), 'The wiki', 'the consent page names the client')
  await page.getByRole('button', { name: 'Allow' }).click()
  await page.waitForURL(rp.claimsUrl)
  const lines = (await page.textContent('body') ?? '').split('\n')
  if (!lines.includes(`OIDC_CLAIM_sub=${user.id}`)) t.comment(`the page: ${lines.join(' | ')}\nApache's log: ${rp.errorLog()}`)
  t.ok(lines.includes(`OIDC_CLAIM_sub=${user.id}`), 'the subject')
  t.ok(lines.includes(`OIDC_CLAIM_iss=${provider.issuer}`))
  t.ok(lines.includes(`OIDC_CLAIM_aud=${client.client_id}`))
  t.ok(lines.includes(`OIDC_CLAIM_email=${user.email}`))
  t.ok(lines.includes('OIDC_CLAIM_name=Grace Hopper'))
  t.ok(lines.includes('OIDC_CLAIM_roles=editor,viewer'), 'the roles, joined by mod_auth_openidc\'s delimiter')
  t.ok(lines.includes('OIDC_CLAIM_acr=aal1'))

  // mod_auth_openidc's logout: end_session_endpoint with the ID token hint, back to the registered URI
  await page.goto(`${rp.redirectUri}?logout=${encodeURIComponent(rp.loggedOutUrl)}`)
  await page.waitForURL(`${rp.loggedOutUrl}**`)
  t.equal((await page.textContent('body'))?.trim(), 'signed out of the application')
  const portal = await page.goto(`${provider.issuer}/portal/account`)
  t.match(page.url(), `${provider.issuer}/portal/login?`, `the portal session ended too (${portal?.status()})`)
  await page.goto(rp.claimsUrl)
  t.match(page.url(), `${provider.issuer}/portal/login?`, 'the application asks gatehouse again, which asks for the sign-in')
  t.same(problems, [])
})
