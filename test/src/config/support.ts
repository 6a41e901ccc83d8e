import type { Test } from 'tap'
import { ConfigError, loadConfig, type Config } from '../../../src/config/config.js'
import { tempDir, TEST_SECRET } from '../../helper.js'

/* What the configuration suites of mail and recovery share: a load on a fresh data folder, and the message of a refusal. */

export function load (t: Test, values: Record<string, unknown>): Config {
  return loadConfig({ fromEnvironment: false, values: { DATA_DIR: tempDir(t), JWT_SECRET: TEST_SECRET, ...values } })
}

export function errorOf (t: Test, values: Record<string, unknown>): string {
  try {
    load(t, values)
  } catch (err) {
    t.type(err, ConfigError)
    return (err as Error).message
  }
  t.fail(`expected a ConfigError for ${JSON.stringify(values)}`)
  return ''
}
