import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { crc32 } from 'node:zlib'
import t from 'tap'
import { startInstance } from './instances.js'

/*
 * A secret scanner's view of gatehouse's API keys (docs/api-keys.md#secret-scanners): this file
 * imports nothing of the product. It asks a real server process (src/server.ts) for keys over HTTP,
 * then finds them in a text the way a scanner's rule does — the regular expression alone — and
 * checks each one offline: the last 6 characters are the CRC32 (IEEE 802.3, as zlib) of the rest,
 * in base62 (0-9A-Za-z), most significant digit first, left-padded with 0.
 */

const RULE = /gh_[0-9a-z]{12}_[0-9A-Za-z]{38}/g
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** CRC-32/ISO-HDLC written out as a scanner would ship it: reflected polynomial 0xEDB88320, a 256-entry table. */
const TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = (c & 1) !== 0 ? 0xEDB88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})

function crc32OfText (text: string): number {
  let crc = 0xFFFFFFFF
  for (const byte of Buffer.from(text, 'utf8')) crc = (TABLE[(crc ^ byte) & 0xFF] as number) ^ (crc >>> 8)
  return (crc ^ 0xFFFFFFFF) >>> 0
}

function base62 (value: number): string {
  let out = ''
  for (let i = 0; i < 6; i++) {
    out = BASE62[value % 62] + out
    value = Math.floor(value / 62)
  }
  return out
}

/** What the scanner reports: a match whose checksum holds. */
function isGatehouseKey (candidate: string): boolean {
  return base62(crc32OfText(candidate.slice(0, -6))) === candidate.slice(-6)
}

t.test('keys a running server issued are found by the rule and verified offline; look-alikes are not', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-scanner-'))
  t.teardown(() => { rmSync(dataDir, { recursive: true, force: true }) })
  const admin = { email: 'admin@example.com', password: 'Scanner-Pass-42' }
  const server = await startInstance(t, 'server', {
    JWT_SECRET: randomBytes(32).toString('base64'),
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    ARGON2_MEMORY_COST: '1024',
    ARGON2_TIME_COST: '1',
    ENABLE_API_KEYS: 'true',
    DATA_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    ADMIN_EMAIL: admin.email,
    ADMIN_PASSWORD: admin.password
  })
  const signIn = await server.call('POST', '/auth/login', { body: admin })
  t.equal(signIn.status, 200)
  const token = (signIn.body as { access_token: string }).access_token
  const issued: string[] = []
  for (let i = 0; i < 40; i++) {
    const res = await server.call('POST', '/api/auth/api-keys', { token, body: { name: `key ${i}` } })
    t.equal(res.status, 201)
    issued.push((res.body as { key: string }).key)
  }

  // a leaked .env, a shell history and a log line, with the keys among other secrets
  const text = issued.map((key, i) => [`API_TOKEN_${i}=${key}`, `curl -H "Authorization: Bearer ${key}" https://api.example.com/`, `aws_secret=${randomBytes(20).toString('base64')}`].join('\n')).join('\n')
  const found = [...new Set([...text.matchAll(RULE)].map((m) => m[0]))]
  t.same(found, issued, 'the rule finds every key, and nothing else')
  for (const key of found) {
    t.ok(isGatehouseKey(key), `${key.slice(0, 15)}… carries its checksum`)
    t.equal(crc32OfText(key.slice(0, -6)), crc32(key.slice(0, -6)), 'the hand-written table agrees with zlib')
  }

  // the negative controls: the same shape with one character changed fails the offline check
  const [first = ''] = issued
  const flipped = first.slice(0, 20) + (first[20] === 'a' ? 'b' : 'a') + first.slice(21)
  t.match(flipped, RULE, 'a look-alike still matches the rule')
  t.notOk(isGatehouseKey(flipped), 'but not the checksum')
  const random = `gh_${'a'.repeat(12)}_${randomBytes(40).toString('base64').replace(/[^0-9A-Za-z]/g, '').padEnd(38, 'x').slice(0, 38)}`
  t.notOk(isGatehouseKey(random), 'random text of the shape is not a key (a 1 in 2^32 chance it is)')
  const refused = await server.call('GET', '/auth/verify', { token: flipped })
  t.same([refused.status, (refused.body as { code: string }).code], [401, 'token_invalid'], 'and the server refuses it too')
})
