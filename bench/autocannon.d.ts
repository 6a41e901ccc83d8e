// The part of autocannon's programmatic API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  interface Options {
    url: string
    connections?: number
    pipelining?: number
    duration?: number
    method?: 'GET' | 'POST'
    headers?: Record<string, string>
    body?: string
    timeout?: number
    /** stop after this many requests instead of `duration` */
    amount?: number
    /** a request sequence; `setupRequest` may give each request its own body (bench/passkeys.ts) */
    requests?: Array<{ method?: 'GET' | 'POST', path?: string, headers?: Record<string, string>, setupRequest?: (request: { body?: string }) => { body?: string } }>
  }
  interface Histogram { p50: number, p99: number, average: number, total: number }
  interface Result {
    duration: number
    errors: number
    timeouts: number
    non2xx: number
    '2xx': number
    latency: Histogram
    requests: Histogram & { sent: number }
  }
  interface Instance extends Promise<Result> {
    stop (): void
    /** each response as it arrives (bench/passkeys.ts times the run by the last) */
    on (event: 'response', listener: () => void): this
  }
  function autocannon (options: Options): Instance
  export default autocannon
}
