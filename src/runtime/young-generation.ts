import { setFlagsFromString } from 'node:v8'

/**
 * V8 doubles its young generation whenever more bytes have survived it than it holds. Start-up
 * is one long burst in which nearly everything survives (module code, schemas, routes), so by the
 * time the server listens the young generation has grown to its maximum, 2 × 16 MiB, and sits
 * there empty until V8's memory reducer gives it back, some 30 s into an idle process: a quarter
 * of the RSS after start-up. Start-up gains nothing from it (what survives is promoted either
 * way), so its growth is held until the server listens, then left to V8: under load it grows
 * again as V8 judges best.
 *
 * The growth factor is read only when the young generation grows, so changing it at run time is
 * safe. The entry (src/server.ts) imports this module first and the server's modules after it.
 * An operator's own young-generation flags (command line or NODE_OPTIONS) are left alone.
 */
const GROWTH_FLAG = '--semi-space-growth-factor'
/** V8's default, restored at release */
const DEFAULT_GROWTH = 2

const operatorTuned = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]
  .some((arg) => /^--(max-|min-)?semi-space/.test(arg))

if (!operatorTuned) setFlagsFromString(`${GROWTH_FLAG}=1`)

/** Start-up is over: the young generation grows as V8 decides. */
export function releaseYoungGeneration (): void {
  if (!operatorTuned) setFlagsFromString(`${GROWTH_FLAG}=${DEFAULT_GROWTH}`)
}
