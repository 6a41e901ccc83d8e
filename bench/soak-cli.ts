import { parseDuration } from '../src/config/units.js'
import { runSoak } from './soak.js'

/**
 * `npm run soak [duration]`: SOAK_DURATION or the first argument, `10m` by default (seconds, or a
 * number with s/m/h). Prints the report; exits 1 when a check fails or the soak could not run.
 */
const raw = process.argv[2] ?? process.env.SOAK_DURATION ?? '10m'
const seconds = /^[0-9]+[smh]?$/.test(raw) ? parseDuration(raw) : NaN
if (!Number.isFinite(seconds) || seconds < 10 || seconds > 24 * 3600) {
  process.stderr.write(`soak: the duration must be 10s to 24h (e.g. 600, 90s, 10m), not ${JSON.stringify(raw)}\n`)
  process.exit(2)
}

try {
  const result = await runSoak({ durationMs: seconds * 1000, progress: (line) => process.stderr.write(line + '\n') })
  process.stdout.write(result.text + '\n')
  process.exit(result.ok ? 0 : 1)
} catch (err) {
  process.stderr.write(`soak failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
  process.exit(1)
}
