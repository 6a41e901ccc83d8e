import { randomUUID } from 'node:crypto'

/** Ids one base serves before the next is drawn: the last 12 hex digits count them. */
const PER_BASE = 2 ** 48

/**
 * Request ids in the UUID form the logs and the 500 bodies show, without a random draw per
 * request: each generator draws a random UUID as its base and counts in its last 12 hex digits,
 * drawing a new base when the count wraps. An id names a request so its log lines can be found;
 * nothing relies on it being unpredictable, and randomUUID on every request cost about 0.5 µs.
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
