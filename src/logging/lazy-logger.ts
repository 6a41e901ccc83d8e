import type { Bindings, ChildLoggerOptions, LogFn } from 'pino'

export interface ParentLogger {
  level: string
  child (bindings: Bindings, options?: ChildLoggerOptions): ParentLogger
  fatal: LogFn
  error: LogFn
  warn: LogFn
  info: LogFn
  debug: LogFn
  trace: LogFn
  silent: LogFn
}

/**
 * Made on first use: making a pino child serializes the bindings, a real share of a request's cost
 * (docs/benchmarks.md), for a logger most requests never write to.
 */
export class LazyChildLogger {
  #real: ParentLogger | undefined

  constructor (private readonly parent: ParentLogger, private readonly bindings: Bindings, private readonly options: ChildLoggerOptions) {}

  get real (): ParentLogger {
    this.#real ??= this.parent.child(this.bindings, this.options)
    return this.#real
  }

  get level (): string { return this.#real?.level ?? this.parent.level }
  set level (level: string) { this.real.level = level }

  child (bindings: Bindings, options?: ChildLoggerOptions): ParentLogger { return this.real.child(bindings, options) }
  declare fatal: LogFn
  declare error: LogFn
  declare warn: LogFn
  declare info: LogFn
  declare debug: LogFn
  declare trace: LogFn
  declare silent: LogFn
}

// on the prototype, not per instance: making the request's logger must cost one small object
for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const) {
  Object.defineProperty(LazyChildLogger.prototype, level, {
    value: function (this: LazyChildLogger, ...args: unknown[]) {
      const real = this.real
      ;(real[level] as (...a: unknown[]) => void).apply(real, args)
    }
  })
}
Object.defineProperty(LazyChildLogger.prototype, 'silent', { value: () => {} })

/** Fastify's `childLoggerFactory`: a LazyChildLogger per request. */
export function lazyChildLoggerFactory (logger: ParentLogger, bindings: Bindings, options: ChildLoggerOptions): LazyChildLogger {
  return new LazyChildLogger(logger, bindings, options)
}
