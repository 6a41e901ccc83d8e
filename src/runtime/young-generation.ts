import { setFlagsFromString } from 'node:v8'

/**
 * Start-up grows V8's young generation to its maximum for nothing, so its growth is held until
 * the server listens (docs/benchmarks.md). An operator's own young-generation flags are left alone.
 */
const GROWTH_FLAG = '--semi-space-growth-factor'
const DEFAULT_GROWTH = 2

const operatorTuned = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]
  .some((arg) => /^--(max-|min-)?semi-space/.test(arg))

if (!operatorTuned) setFlagsFromString(`${GROWTH_FLAG}=1`)

export function releaseYoungGeneration (): void {
  if (!operatorTuned) setFlagsFromString(`${GROWTH_FLAG}=${DEFAULT_GROWTH}`)
}
