import t from 'tap'
import { errorOf, load } from './support.js'

const DATA_KEY = `k1:${Buffer.alloc(32, 7).toString('base64')}`
const ON = { ENABLE_PASSKEYS: true, PUBLIC_URL: 'https://auth.example.com' }
const PRODUCTION = { APP_ENV: 'production', DATA_ENCRYPTION_KEYS: DATA_KEY }

t.test('off by default: no passkeys, no data keys needed', async (t) => {
  const config = load(t, {})
  t.equal(config.passkeys, undefined)
  t.equal(config.dataEncryptionKeys, undefined)
  t.equal(load(t, { PUBLIC_URL: 'https://auth.example.com', WEBAUTHN_RP_ID: 'example.org' }).passkeys, undefined, 'the other settings are not read while off')
})

t.test('on: the defaults come from PUBLIC_URL', async (t) => {
  const config = load(t, ON)
  t.strictSame(config.passkeys, {
    rpId: 'auth.example.com',
    rpName: 'gatehouse',
    origins: ['https://auth.example.com'],
    userVerification: 'required',
    satisfiesMfa: true,
    maxPerUser: 10
  })
  t.equal(config.dataEncryptionKeys?.length, 1, 'development generates the key the challenges are hashed under')
})

t.test('every setting read as given', async (t) => {
  const config = load(t, {
    ...ON,
    PUBLIC_URL: 'https://Auth.Example.com/',
    WEBAUTHN_RP_ID: 'example.com',
    WEBAUTHN_RP_NAME: 'Example Corp',
    WEBAUTHN_ORIGINS: ' https://auth.example.com, https://example.com:8443/ ,https://auth.example.com',
    WEBAUTHN_USER_VERIFICATION: 'preferred',
    PASSKEY_SATISFIES_MFA: false,
    PASSKEYS_MAX_PER_USER: 3
  })
  t.strictSame(config.passkeys, {
    rpId: 'example.com',
    rpName: 'Example Corp',
    origins: ['https://auth.example.com', 'https://example.com:8443'],
    userVerification: 'preferred',
    satisfiesMfa: false,
    maxPerUser: 3
  }, 'a parent domain as RP ID (a portal on a subdomain); origins trimmed, deduplicated, serialised as browsers do')
  t.strictSame(load(t, { ENABLE_PASSKEYS: true, PUBLIC_URL: 'http://localhost:3000' }).passkeys?.origins, ['http://localhost:3000'], 'http on localhost outside production')
  t.equal(load(t, { ENABLE_PASSKEYS: true, PUBLIC_URL: 'http://localhost:3000' }).passkeys?.rpId, 'localhost')
  t.equal(load(t, { ...ON, ...PRODUCTION }).passkeys?.rpId, 'auth.example.com', 'production with its keys starts')
})

t.test('every refusal names the setting', async (t) => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['no PUBLIC_URL', { ENABLE_PASSKEYS: true }, 'Invalid configuration: ENABLE_PASSKEYS=true needs PUBLIC_URL'],
    ['an RP ID that is not PUBLIC_URL\'s host or above it', { ...ON, WEBAUTHN_RP_ID: 'example.org' }, 'Invalid configuration: WEBAUTHN_RP_ID must be PUBLIC_URL\'s host auth.example.com or a parent domain of it'],
    ['a sibling', { ...ON, WEBAUTHN_RP_ID: 'app.example.com' }, 'Invalid configuration: WEBAUTHN_RP_ID must be PUBLIC_URL\'s host auth.example.com or a parent domain of it'],
    ['a suffix that is no label boundary', { ...ON, WEBAUTHN_RP_ID: 'ample.com' }, 'Invalid configuration: WEBAUTHN_RP_ID must be PUBLIC_URL\'s host auth.example.com or a parent domain of it'],
    ['a top-level name', { ...ON, WEBAUTHN_RP_ID: 'com' }, 'Invalid configuration: WEBAUTHN_RP_ID must be a host name (example.com)'],
    ['a URL for an RP ID', { ...ON, WEBAUTHN_RP_ID: 'https://example.com' }, 'Invalid configuration: WEBAUTHN_RP_ID must be a host name (example.com)'],
    ['an origin with a path', { ...ON, WEBAUTHN_ORIGINS: 'https://auth.example.com/portal' }, 'Invalid configuration: WEBAUTHN_ORIGINS lists origins (https://host[:port]): "https://auth.example.com/portal" is not one'],
    ['not a URL', { ...ON, WEBAUTHN_ORIGINS: 'auth.example.com' }, 'Invalid configuration: WEBAUTHN_ORIGINS lists origins (https://host[:port]): "auth.example.com" is not one'],
    ['an origin off the RP ID', { ...ON, WEBAUTHN_ORIGINS: 'https://example.com' }, 'Invalid configuration: WEBAUTHN_ORIGINS: https://example.com is not on WEBAUTHN_RP_ID auth.example.com or under it'],
    ['http off localhost', { ...ON, WEBAUTHN_ORIGINS: 'http://auth.example.com' }, 'Invalid configuration: WEBAUTHN_ORIGINS: http://auth.example.com must be https (http only for localhost names outside production)'],
    ['no origin at all', { ...ON, WEBAUTHN_ORIGINS: ' , ' }, 'Invalid configuration: WEBAUTHN_ORIGINS lists at least one origin'],
    ['production without data keys', { ...ON, APP_ENV: 'production' }, 'Invalid configuration: DATA_ENCRYPTION_KEYS is required when APP_ENV=production and ENABLE_PASSKEYS=true']
  ]
  for (const [what, values, message] of cases) t.equal(errorOf(t, values), message, what)
  const schemaRefusals: Array<[string, Record<string, unknown>]> = [
    ['WEBAUTHN_USER_VERIFICATION', { ...ON, WEBAUTHN_USER_VERIFICATION: 'discouraged' }],
    ['PASSKEYS_MAX_PER_USER', { ...ON, PASSKEYS_MAX_PER_USER: 0 }],
    ['PASSKEYS_MAX_PER_USER', { ...ON, PASSKEYS_MAX_PER_USER: 101 }],
    ['WEBAUTHN_RP_NAME', { ...ON, WEBAUTHN_RP_NAME: 'x'.repeat(65) }],
    ['PASSKEY_SATISFIES_MFA', { ...ON, PASSKEY_SATISFIES_MFA: 'sometimes' }],
    ['ENABLE_PASSKEYS', { ENABLE_PASSKEYS: 'yes' }]
  ]
  for (const [setting, values] of schemaRefusals) t.match(errorOf(t, values), new RegExp(`^Invalid configuration: .*${setting}`), setting)
})

t.test('http on localhost is refused in production', async (t) => {
  t.match(errorOf(t, { ENABLE_PASSKEYS: true, PUBLIC_URL: 'https://localhost', WEBAUTHN_ORIGINS: 'http://localhost:3000', ...PRODUCTION }),
    /WEBAUTHN_ORIGINS: http:\/\/localhost:3000 must be https/)
})
