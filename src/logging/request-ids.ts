import { randomUUID } from 'node:crypto'

const PER_BASE = 2 ** 48

/**
 * A random base, then a count: an id only names a request's log lines, nothing relies on it being
 * unpredictable, and a draw per request costs (docs/benchmarks.md).
 */
export function requestIdGenerator (): () => string {
  let base = ''
  let count = 0
  return () => {
    if (count === 0) base = randomUUID().slice(0, 24)
    const id = base + count.toString(16).padStart(12, '0')
    count = (count + 1) % PER_BASE
    return id
  }
}
