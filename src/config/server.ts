import { Type, type Static, type TObject } from '@sinclair/typebox'
import { parseTrustProxy, TrustProxySettings } from './trust-proxy.js'
import { durationSetting, parseDuration } from './units.js'

/**
 * How the server process listens and answers (address, workers, proxies, timeouts, shedding,
 * browsers, bodies), spread into the one ConfigSchema (src/config/config.ts).
 */
export const ServerSettings = {
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65535, description: 'the TCP port to listen on' }),
  HOST: Type.String({ default: '127.0.0.1', minLength: 1, description: 'the address to listen on (`0.0.0.0` for every interface)' }),
  WORKERS: Type.Integer({
    default: 1,
    minimum: 1,
    maximum: 64,
    description: 'worker processes (node:cluster) sharing `PORT`; more than one needs nothing else on SQLite or PostgreSQL'
  }),
  TRUST_PROXY: Type.String({
    default: 'false',
    pattern: '^(false|[0-9]+|[0-9a-fA-F:.,/ ]+)$',
    maxLength: 1024,
    description: 'whether `X-Forwarded-For` is believed: `false`, a hop count, or a comma-separated list of proxy ' +
      'addresses and networks. `true`, `/0` and lists that together cover every address are refused, and so are ' +
      'networks wider than an IPv4 /8 or an IPv6 /32 unless `TRUST_PROXY_ALLOW_WIDE=true`'
  }),
  ...TrustProxySettings,
  REQUEST_TIMEOUT: durationSetting('a whole request (and an idle connection) is cut after this; headers must arrive within 10 s', '30s'),
  MAX_EVENT_LOOP_DELAY: Type.Integer({
    default: 1000,
    minimum: 0,
    maximum: 60000,
    description: 'milliseconds of mean event-loop delay past which requests are shed with 503 `service_unavailable` ' +
      'and `Retry-After: 10`; `0` turns shedding off'
  }),
  CORS_ORIGINS: Type.Optional(Type.String({
    maxLength: 4096,
    examples: ['https://app.example.com'],
    description: 'comma-separated browser origins allowed by CORS (credentials allowed) and trusted by the CSRF check'
  })),
  PUBLIC_URL: Type.Optional(Type.String({
    pattern: '^https?://[^/?#\\s]+(/[^?#\\s]*)?$',
    maxLength: 2048,
    examples: ['https://auth.example.com'],
    description: 'the URL clients reach the service at (its origin, and the path prefix a proxy adds), published as ' +
      'the `servers` entry of /openapi.json; unset, the document names the origin it was requested at'
  })),
  BODY_LIMIT: Type.Integer({ default: 65536, minimum: 1024, maximum: 10485760, description: 'largest request body in bytes; larger is 413' }),
  VALIDATION_ERROR_DETAILS: Type.Boolean({ default: false, description: '`true` adds `details: [{field, tag, value, message}]` to 422 bodies' })
}

export interface ServerConfig {
  port: number
  host: string
  workers: number
  trustProxy: false | number | string
  /** seconds */
  requestTimeout: number
  maxEventLoopDelay: number
  corsOrigins: string[]
  publicUrl: string | undefined
  bodyLimit: number
  validationErrorDetails: boolean
}

export function serverConfig (raw: Static<TObject<typeof ServerSettings>>): ServerConfig {
  return {
    port: raw.PORT,
    host: raw.HOST,
    workers: raw.WORKERS,
    trustProxy: parseTrustProxy(raw.TRUST_PROXY, raw.TRUST_PROXY_ALLOW_WIDE),
    requestTimeout: parseDuration(raw.REQUEST_TIMEOUT),
    maxEventLoopDelay: raw.MAX_EVENT_LOOP_DELAY,
    corsOrigins: raw.CORS_ORIGINS ? raw.CORS_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean) : [],
    publicUrl: raw.PUBLIC_URL?.replace(/\/+$/, ''),
    bodyLimit: raw.BODY_LIMIT,
    validationErrorDetails: raw.VALIDATION_ERROR_DETAILS
  }
}
