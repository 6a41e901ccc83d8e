import { Type, type Static, type TObject } from '@sinclair/typebox'
import { ConfigError } from '../errors.js'

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** What the service tells its operators (logs, metrics), spread into the one ConfigSchema (src/config/config.ts). */
export const ObservabilitySettings = {
  LOG_LEVEL: Type.Union(LOG_LEVELS.map((l) => Type.Literal(l)), {
    default: 'info',
    description: 'the least severe log level written'
  }),
  LOG_REQUESTS: Type.Boolean({ default: false, description: '`true` writes one line per request; audit and error lines are written regardless' }),
  METRICS_ENABLED: Type.Boolean({
    default: false,
    description: '`true` serves Prometheus metrics at `GET /metrics` to a bearer of `METRICS_TOKEN`; off, that path is an unknown route (404)'
  }),
  METRICS_TOKEN: Type.Optional(Type.String({
    minLength: 16,
    maxLength: 1024,
    description: 'the Bearer token a scraper presents at `/metrics`; required (at least 16 characters) when `METRICS_ENABLED=true`'
  }))
}

export interface ObservabilityConfig {
  logLevel: typeof LOG_LEVELS[number]
  logRequests: boolean
  metrics: { token: string } | undefined
}

export function observabilityConfig (raw: Static<TObject<typeof ObservabilitySettings>>): ObservabilityConfig {
  return { logLevel: raw.LOG_LEVEL, logRequests: raw.LOG_REQUESTS, metrics: metricsConfig(raw) }
}

/** Metrics tell an outsider how many sign-ins fail and how busy the service is: never served unprotected. */
function metricsConfig (raw: Static<TObject<typeof ObservabilitySettings>>): ObservabilityConfig['metrics'] {
  if (!raw.METRICS_ENABLED) return undefined
  if (raw.METRICS_TOKEN === undefined) throw new ConfigError('Invalid configuration: METRICS_TOKEN is required when METRICS_ENABLED=true')
  return { token: raw.METRICS_TOKEN }
}
