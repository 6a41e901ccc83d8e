import { existsSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { ConfigError, loadConfig } from '../../../src/config/config.js'
import { tempDir, TEST_SECRET } from '../../helper.js'

const STRONG_SECRET = 'k4J9x2Qw7Lm3Pz8Rt6Vb1Nc5Hy0Gd-Fs_ErTyUiOp'
const DATA_KEY = `k1:${Buffer.alloc(32, 7).toString('base64')}`

function load (t: Test, values: Record<string, unknown>) {
  return loadConfig({ fromEnvironment: false, values: { DATA_DIR: tempDir(t), JWT_SECRET: TEST_SECRET, ...values } })
}

t.test('TOTP is off by default and then needs no data encryption key', async (t) => {
  const config = load(t, {})
  t.equal(config.totp, undefined)
  t.equal(config.dataEncryptionKeys, undefined)
})

t.test('on, it takes the issuer and the given keys', async (t) => {
  const config = load(t, { ENABLE_TOTP: true, TOTP_ISSUER: 'Example Corp', DATA_ENCRYPTION_KEYS: DATA_KEY })
  t.same(config.totp, { issuer: 'Example Corp', maxFailures: 10, failureWindow: 86_400 })
  t.same(config.dataEncryptionKeys?.map((k) => k.id), ['k1'])
  t.equal(load(t, { ENABLE_TOTP: true, DATA_ENCRYPTION_KEYS: DATA_KEY }).totp?.issuer, 'gatehouse')
})

t.test('in development without keys, one is generated into DATA_DIR', async (t) => {
  const dir = tempDir(t)
  const config = load(t, { ENABLE_TOTP: true, DATA_DIR: dir })
  t.equal(config.dataEncryptionKeys?.length, 1)
  t.ok(existsSync(join(dir, 'data-encryption-keys')))
})

t.test('production with ENABLE_TOTP and no DATA_ENCRYPTION_KEYS refuses to start, naming it', async (t) => {
  t.throws(() => load(t, { APP_ENV: 'production', JWT_SECRET: STRONG_SECRET, ENABLE_TOTP: true }),
    new ConfigError('Invalid configuration: DATA_ENCRYPTION_KEYS is required when APP_ENV=production and ENABLE_TOTP=true'))
  const config = load(t, { APP_ENV: 'production', JWT_SECRET: STRONG_SECRET, ENABLE_TOTP: true, DATA_ENCRYPTION_KEYS: DATA_KEY })
  t.same(config.totp, { issuer: 'gatehouse', maxFailures: 10, failureWindow: 86_400 }, 'with the keys it starts')
})

t.test('an issuer with a colon is refused, naming TOTP_ISSUER', async (t) => {
  t.throws(() => load(t, { ENABLE_TOTP: true, TOTP_ISSUER: 'a:b' }), /TOTP_ISSUER/)
})
