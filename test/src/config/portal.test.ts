import t from 'tap'
import { errorOf, load } from './support.js'

const STRONG_SECRET = 'k4J9x2Qw7Lm3Pz8Rt6Vb1Nc5Hy0Gd-Fs_ErTyUiOp'
const DATA_KEY = `k1:${Buffer.alloc(32, 7).toString('base64')}`
const ON = { ENABLE_PORTAL: true, PUBLIC_URL: 'https://auth.example.com' }

t.test('off by default: no portal, no cookie domain, no data keys needed', async (t) => {
  const config = load(t, {})
  t.equal(config.portal, undefined)
  t.equal(config.cookieDomain, undefined)
  t.equal(config.dataEncryptionKeys, undefined)
})

t.test('on: the rules every return URL is held to, the title, the default return URL and the reset page', async (t) => {
  const config = load(t, { ...ON, PUBLIC_URL: 'https://Auth.Example.com/', PORTAL_RETURN_HOSTS: 'App.Example.net, admin.example.org.', ENABLE_PASSWORD_RESET: true })
  t.strictSame(config.portal, {
    publicUrl: 'https://Auth.Example.com',
    publicHost: 'auth.example.com',
    cookieDomain: undefined,
    returnHosts: new Set(['app.example.net', 'admin.example.org']),
    production: false,
    title: 'gatehouse',
    defaultReturnUrl: 'https://auth.example.com/portal/account',
    forwardAuthRedirect: false
  })
  t.equal(config.passwordReset?.url, 'https://Auth.Example.com/portal/reset#token={token}', 'the portal\'s reset page is the default link')
  t.equal(load(t, { ...ON, ENABLE_PASSWORD_RESET: true, PASSWORD_RESET_URL: 'https://app.example.com/r#t={token}' }).passwordReset?.url, 'https://app.example.com/r#t={token}', 'a set one wins')
  t.equal(config.dataEncryptionKeys?.length, 1, 'development generates the key that seals the flow cookie')
})

t.test('a setting that needs another refuses the start, naming both', async (t) => {
  t.equal(errorOf(t, { ENABLE_PORTAL: true }), 'Invalid configuration: ENABLE_PORTAL=true needs PUBLIC_URL')
  t.equal(errorOf(t, { FORWARD_AUTH_REDIRECT: true, PUBLIC_URL: 'https://auth.example.com' }), 'Invalid configuration: FORWARD_AUTH_REDIRECT=true needs ENABLE_PORTAL=true')
  t.equal(errorOf(t, { COOKIE_DOMAIN: 'example.com' }), 'Invalid configuration: COOKIE_DOMAIN needs PUBLIC_URL')
  t.equal(load(t, { ...ON, FORWARD_AUTH_REDIRECT: true }).portal?.forwardAuthRedirect, true, 'with it, it starts')
})

t.test('https, except a local name outside production', async (t) => {
  const https = 'Invalid configuration: ENABLE_PORTAL=true needs PUBLIC_URL on https (http only for localhost, *.localhost or a loopback address outside production): its cookies are Secure'
  t.equal(errorOf(t, { ...ON, PUBLIC_URL: 'http://auth.example.com' }), https)
  for (const local of ['http://localhost:3000', 'http://auth.gh.localhost', 'http://127.0.0.1:8080']) {
    t.equal(load(t, { ...ON, PUBLIC_URL: local }).portal?.publicUrl, local, local)
  }
  t.equal(errorOf(t, { ...ON, PUBLIC_URL: 'http://localhost:3000', APP_ENV: 'production', JWT_SECRET: STRONG_SECRET, DATA_ENCRYPTION_KEYS: DATA_KEY }), https)
})

t.test('production needs DATA_ENCRYPTION_KEYS, naming ENABLE_PORTAL', async (t) => {
  t.equal(errorOf(t, { ...ON, APP_ENV: 'production', JWT_SECRET: STRONG_SECRET }), 'Invalid configuration: DATA_ENCRYPTION_KEYS is required when APP_ENV=production and ENABLE_PORTAL=true')
  t.equal(load(t, { ...ON, APP_ENV: 'production', JWT_SECRET: STRONG_SECRET, DATA_ENCRYPTION_KEYS: DATA_KEY }).portal?.production, true)
})

t.test('COOKIE_DOMAIN: two labels at least, and PUBLIC_URL under it', async (t) => {
  t.equal(load(t, { ...ON, COOKIE_DOMAIN: 'Example.com' }).cookieDomain, 'example.com')
  t.equal(load(t, { ...ON, COOKIE_DOMAIN: '.example.com' }).cookieDomain, 'example.com', 'a leading dot is the same domain')
  t.equal(load(t, { ...ON, PUBLIC_URL: 'https://example.com', COOKIE_DOMAIN: 'example.com' }).cookieDomain, 'example.com', 'the host itself')
  t.equal(errorOf(t, { ...ON, COOKIE_DOMAIN: 'com' }), 'Invalid configuration: COOKIE_DOMAIN must be a host name of at least two labels (example.com)')
  t.equal(errorOf(t, { ...ON, COOKIE_DOMAIN: 'exa mple.com' }), 'Invalid configuration: COOKIE_DOMAIN must be a host name of at least two labels (example.com)')
  t.equal(errorOf(t, { ...ON, COOKIE_DOMAIN: 'other.com' }), 'Invalid configuration: PUBLIC_URL\'s host auth.example.com must be COOKIE_DOMAIN or end in .other.com')
  t.equal(errorOf(t, { ...ON, COOKIE_DOMAIN: 'ample.com', PUBLIC_URL: 'https://example.com' }), 'Invalid configuration: PUBLIC_URL\'s host example.com must be COOKIE_DOMAIN or end in .ample.com', 'a suffix that is not a parent')
  const config = load(t, { ...ON, COOKIE_DOMAIN: 'example.com' })
  t.equal(config.portal?.cookieDomain, 'example.com', 'the return-URL rule reads it too')
})

t.test('PORTAL_DEFAULT_RETURN_URL must itself be an allowed return URL; PORTAL_RETURN_HOSTS lists bare host names', async (t) => {
  t.equal(load(t, { ...ON, PORTAL_DEFAULT_RETURN_URL: '/welcome' }).portal?.defaultReturnUrl, 'https://auth.example.com/welcome')
  t.equal(load(t, { ...ON, COOKIE_DOMAIN: 'example.com', PORTAL_DEFAULT_RETURN_URL: 'https://app.example.com/' }).portal?.defaultReturnUrl, 'https://app.example.com/')
  const refused = 'Invalid configuration: PORTAL_DEFAULT_RETURN_URL must be an allowed return URL (docs/portal.md#return-urls): https, on PUBLIC_URL\'s host, COOKIE_DOMAIN or PORTAL_RETURN_HOSTS'
  for (const value of ['https://evil.example.net/', 'http://auth.example.com/', '//evil.example.net', 'javascript:alert(1)']) {
    t.equal(errorOf(t, { ...ON, PORTAL_DEFAULT_RETURN_URL: value }), refused, value)
  }
  for (const value of ['https://app.example.net', 'app.example.net/x', 'app.example.net:8443', 'a b']) {
    t.equal(errorOf(t, { ...ON, PORTAL_RETURN_HOSTS: value }), 'Invalid configuration: PORTAL_RETURN_HOSTS lists host names (no scheme, port or path), comma-separated', value)
  }
  t.equal(errorOf(t, { ...ON, PORTAL_TITLE: 'x'.repeat(61) }), 'Invalid configuration: PORTAL_TITLE must NOT have more than 60 characters')
})
