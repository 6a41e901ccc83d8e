import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { ConfigError, loadConfig } from '../../../src/config/config.js'
import { tempDir, TEST_SECRET } from '../../helper.js'

function load (values: Record<string, unknown>) {
  return loadConfig({ fromEnvironment: false, values: { JWT_SECRET: TEST_SECRET, ...values } })
}

const dataKeys = `k1:${randomBytes(32).toString('base64')}`

t.test('the defaults leave everything as before: HS256, no audience, nothing generated', async (t) => {
  const dir = tempDir(t)
  const config = load({ DATA_DIR: dir })
  t.same({ alg: config.jwtAlg, aud: config.jwtAudience, keys: config.dataEncryptionKeys, maxAge: config.jwksMaxAge, lead: config.jwtKeyPublishLead, every: config.jwtKeyRotationInterval },
    { alg: 'HS256', aud: undefined, keys: undefined, maxAge: 600, lead: 1200, every: undefined })
  t.notOk(existsSync(join(dir, 'data-encryption-keys')))
})

t.test('each keys setting is validated with a message naming it', async (t) => {
  const dir = tempDir(t)
  t.throws(() => load({ DATA_DIR: dir, JWT_ALG: 'HS512' }), /JWT_ALG/)
  t.throws(() => load({ DATA_DIR: dir, JWT_AUDIENCE: '' }), /JWT_AUDIENCE/)
  t.throws(() => load({ DATA_DIR: dir, JWKS_MAX_AGE: '10 minutes' }), /JWKS_MAX_AGE/)
  t.throws(() => load({ DATA_DIR: dir, JWT_KEY_PUBLISH_LEAD: '-1' }), /JWT_KEY_PUBLISH_LEAD/)
  t.throws(() => load({ DATA_DIR: dir, JWT_KEY_ROTATION_INTERVAL: 'often' }), /JWT_KEY_ROTATION_INTERVAL/)
  t.throws(() => load({ DATA_DIR: dir, JWT_KEY_ROTATION_INTERVAL: '20m' }),
    new ConfigError('Invalid configuration: JWT_KEY_ROTATION_INTERVAL must be longer than JWT_KEY_PUBLISH_LEAD'))
  t.throws(() => load({ DATA_DIR: dir, DATA_ENCRYPTION_KEYS: 'k1:short' }), /DATA_ENCRYPTION_KEYS key k1 must be 32 bytes/)
  const config = load({ DATA_DIR: dir, JWT_ALG: 'EdDSA', JWT_AUDIENCE: 'api', JWKS_MAX_AGE: '5m', JWT_KEY_ROTATION_INTERVAL: '90d', DATA_ENCRYPTION_KEYS: dataKeys })
  t.same([config.jwtAlg, config.jwtAudience, config.jwksMaxAge, config.jwtKeyPublishLead, config.jwtKeyRotationInterval, config.dataEncryptionKeys?.map((k) => k.id)],
    ['EdDSA', 'api', 300, 600, 90 * 86400, ['k1']])
})

t.test('a JWT_KEY_PUBLISH_LEAD shorter than jose\'s 30 s refetch cooldown is refused naming the setting; unset it is never shorter', async (t) => {
  const dir = tempDir(t)
  const refused = new ConfigError('Invalid configuration: JWT_KEY_PUBLISH_LEAD must be at least 30s: jose\'s remote key set fetches an unknown key at most every 30 s, so tokens of a key published for less are refused (docs/keys.md)')
  for (const lead of ['0', '29', '29s']) t.throws(() => load({ DATA_DIR: dir, JWT_KEY_PUBLISH_LEAD: lead }), refused, `JWT_KEY_PUBLISH_LEAD=${lead}`)
  t.equal(load({ DATA_DIR: dir, JWT_KEY_PUBLISH_LEAD: '30s' }).jwtKeyPublishLead, 30)
  t.same([load({ DATA_DIR: dir, JWKS_MAX_AGE: '5' }).jwtKeyPublishLead, load({ DATA_DIR: dir, JWKS_MAX_AGE: '1m' }).jwtKeyPublishLead], [30, 120],
    'the default, twice JWKS_MAX_AGE, is at least 30 s')
})

t.test('production refuses an asymmetric JWT_ALG without DATA_ENCRYPTION_KEYS', async (t) => {
  const dir = tempDir(t)
  t.throws(() => load({ DATA_DIR: dir, APP_ENV: 'production', JWT_ALG: 'ES256' }),
    new ConfigError('Invalid configuration: DATA_ENCRYPTION_KEYS is required when APP_ENV=production and JWT_ALG is not HS256'))
  t.equal(load({ DATA_DIR: dir, APP_ENV: 'production', JWT_ALG: 'ES256', DATA_ENCRYPTION_KEYS: dataKeys }).jwtAlg, 'ES256')
  t.notOk(existsSync(join(dir, 'data-encryption-keys')))
})

t.test('development generates the data encryption key once into DATA_DIR, mode 0600, and reuses it', async (t) => {
  const dir = tempDir(t)
  const first = load({ DATA_DIR: dir, JWT_ALG: 'ES256' })
  const file = join(dir, 'data-encryption-keys')
  t.equal(statSync(file).mode & 0o777, 0o600)
  t.match(readFileSync(file, 'utf8'), /^dev1:[A-Za-z0-9+/]{43}=$/)
  const second = load({ DATA_DIR: dir, JWT_ALG: 'RS256' })
  t.same(second.dataEncryptionKeys, first.dataEncryptionKeys)
  chmodSync(file, 0o644)
  t.throws(() => load({ DATA_DIR: dir, JWT_ALG: 'ES256' }), new ConfigError(
    `Invalid configuration: the development data encryption key file ${file} is open to other users (mode 0644); delete it to generate a new one`))
})
