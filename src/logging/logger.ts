import type { LoggerOptions } from 'pino'
import type { Config } from '../config/config.js'

/** Tokens, passwords, cookies and the Authorization header never reach a log line (docs/security.md). */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.current_password',
  '*.new_password',
  '*.access_token',
  '*.refresh_token',
  '*.token'
]

/** A pino destination: anything with `write(line)`. */
export interface LogStream { write (line: string): void }

/** The part of a pino logger the framework-free core writes to (a Fastify app passes its own). */
export interface CoreLogger {
  info (fields: object, message: string): void
  warn (fields: object, message: string): void
  error (fields: object, message: string): void
}

/** pino's options (Fastify's `logger` takes them as they are), plus the destination tests read. */
export function loggerOptions (config: Config, stream?: LogStream): LoggerOptions & { stream?: LogStream } {
  return {
    level: config.logLevel,
    redact: { paths: REDACT, censor: '[redacted]' },
    ...(stream === undefined ? {} : { stream })
  }
}
