import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { ConfigError, loadConfig } from '../../../src/config/config.js'
import { tempDir, TEST_SECRET } from '../../helper.js'

/* The settings of API keys (src/config/api-keys.ts, docs/api-keys.md#settings). */

function load (values: Record<string, unknown>) {
  return loadConfig({ fromEnvironment: false, values: { JWT_SECRET: TEST_SECRET, ...values } })
}

t.test('off by default: no settings, no data keys generated', async (t) => {
  const dir = tempDir(t)
  const config = load({ DATA_DIR: dir })
  t.equal(config.apiKeys, undefined)
  t.equal(config.dataEncryptionKeys, undefined)
  t.notOk(existsSync(join(dir, 'data-encryption-keys')))
})

t.test('on: the defaults (90d, 50, no rate limit) and given values', async (t) => {
  const dir = tempDir(t)
  t.same(load({ DATA_DIR: dir, ENABLE_API_KEYS: true }).apiKeys, { maxTtl: 90 * 86400, maxPerUser: 50, rateLimit: undefined })
  t.ok(existsSync(join(dir, 'data-encryption-keys')), 'development generates the data key the hashes need')
  t.same(load({ DATA_DIR: dir, ENABLE_API_KEYS: true, API_KEY_MAX_TTL: '30d', API_KEYS_MAX_PER_USER: 5, API_KEY_RATE_LIMIT: '600/m' }).apiKeys,
    { maxTtl: 30 * 86400, maxPerUser: 5, rateLimit: { max: 600, windowSeconds: 60 } })
})

t.test('production refuses ENABLE_API_KEYS without DATA_ENCRYPTION_KEYS, naming both', async (t) => {
  const dir = tempDir(t)
  t.throws(() => load({ DATA_DIR: dir, APP_ENV: 'production', ENABLE_API_KEYS: true }),
    new ConfigError('Invalid configuration: DATA_ENCRYPTION_KEYS is required when APP_ENV=production and ENABLE_API_KEYS=true'))
  const config = load({ DATA_DIR: dir, APP_ENV: 'production', ENABLE_API_KEYS: true, DATA_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}` })
  t.equal(config.dataEncryptionKeys?.[0]?.id, 'k1')
})

t.test('bad values stop the start naming the setting', async (t) => {
  const dir = tempDir(t)
  t.throws(() => load({ DATA_DIR: dir, ENABLE_API_KEYS: true, API_KEY_MAX_TTL: '10s' }), new ConfigError('Invalid configuration: API_KEY_MAX_TTL must be at least 60s'))
  t.throws(() => load({ DATA_DIR: dir, ENABLE_API_KEYS: true, API_KEY_RATE_LIMIT: '0/m' }), new ConfigError('Invalid configuration: API_KEY_RATE_LIMIT must allow at least one request'))
  t.throws(() => load({ DATA_DIR: dir, ENABLE_API_KEYS: true, API_KEY_RATE_LIMIT: 'lots' }), /API_KEY_RATE_LIMIT/)
  t.throws(() => load({ DATA_DIR: dir, ENABLE_API_KEYS: true, API_KEY_MAX_TTL: 'forever' }), /API_KEY_MAX_TTL/)
  t.throws(() => load({ DATA_DIR: dir, ENABLE_API_KEYS: true, API_KEYS_MAX_PER_USER: 0 }), /API_KEYS_MAX_PER_USER/)
})
