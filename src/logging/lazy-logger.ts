import type { Bindings, ChildLoggerOptions, LogFn } from 'pino'

/** What a request's logger is made from: pino's logger as Fastify holds it. */
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
 * A request's logger, made on first use. Fastify gives every request a pino child carrying its
 * request id, and pino serializes (and redacts) the bindings when the child is made: about 2 µs,
 * a tenth of what a whole GET /auth/verify costs, for a logger most requests never write to.
 * The line, when one is written, is the same.
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
