import { join } from 'node:path'
import { tempDir, type TestContext } from '../helper.js'
import { cli } from './cli-process.js'

/** Known breached in every list the tests build: it passes NewPassword's other rules (8 characters or more). */
export const BREACHED = 'Breached-Pass-1'
/** Listed too, but shorter than NewPassword's 8: it fails its other rules first. */
export const SHORT_BREACHED = 'abc123'
/** Not listed. */
export const FRESH = 'Fresh-Pass-2468'

/**
 * A blocklist built by the real `gatehouse passwords build-blocklist`, as a child process (from
 * standard input, `plain` unless `format` says `sha1`), in a folder removed at teardown.
 */
export async function blocklistFile (t: TestContext, lines: string, format: 'plain' | 'sha1' = 'plain'): Promise<string> {
  const file = join(tempDir(t), 'breached.bin')
  const built = await cli(['passwords', 'build-blocklist', '--out', file, '--format', format], {}, lines)
  if (built.code !== 0) throw new Error(`build-blocklist exited ${String(built.code)}: ${built.stderr}`)
  return file
}
