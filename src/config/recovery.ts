import { Type, type Static } from '@sinclair/typebox'
import { ConfigError } from '../errors.js'
import { durationSetting, parseDuration, parseRate, rateSetting } from './units.js'

/* Both features are off by default; while off, their routes answer 501 as reserved paths. */

const duration = (value: string, description: string) => durationSetting(description, value)

export const RecoveryConfigSchema = {
  ENABLE_PASSWORD_RESET: Type.Boolean({
    default: false,
    description: '`true` enables `POST /auth/forgot-password` and `POST /auth/reset-password` (needs `PASSWORD_RESET_URL`; in production `SMTP_URL`)'
  }),
  PASSWORD_RESET_URL: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 2048,
    examples: ['https://app.example.com/reset#token={token}'],
    description: 'the link a reset mail carries, `{token}` replaced by the token: put it after `#` so it never reaches a server log. ' +
      'Required with `ENABLE_PASSWORD_RESET`; https in production; never taken from the request'
  })),
  PASSWORD_RESET_TTL: duration('30m', 'how long a reset link works'),
  ENABLE_EMAIL_OTP: Type.Boolean({
    default: false,
    description: '`true` enables `POST /auth/send-otp` and `POST /auth/verify-otp`: six-digit codes by mail to sign in or confirm the address (in production needs `SMTP_URL`)'
  }),
  EMAIL_OTP_TTL: duration('10m', 'how long an email code works'),
  EMAIL_OTP_MAX_ATTEMPTS: Type.Integer({ default: 5, minimum: 1, maximum: 20, description: 'wrong codes after which an email code is spent' }),
  EMAIL_OTP_ACCOUNT_MAX_FAILURES: Type.Integer({
    default: 10,
    minimum: 1,
    maximum: 1000,
    description: 'wrong email codes for one address (known or not) within `EMAIL_OTP_ACCOUNT_FAILURE_WINDOW`, from every client address together, ' +
      'after which `verify-otp` for it gets 429 until the window passes'
  }),
  EMAIL_OTP_ACCOUNT_FAILURE_WINDOW: duration('1d', 'the window of `EMAIL_OTP_ACCOUNT_MAX_FAILURES` (it starts at the first failure)'),
  EMAIL_OTP_ACCOUNT_MAX_MAILS: Type.Integer({
    default: 5,
    minimum: 1,
    maximum: 1000,
    description: 'code mails to one account within `EMAIL_OTP_ACCOUNT_MAIL_WINDOW` asked for from client addresses the account has not signed in from ' +
      'in the last 30 days; further requests get the same 202 and send nothing. Requests from its own addresses are not counted'
  }),
  EMAIL_OTP_ACCOUNT_MAIL_WINDOW: duration('1h', 'the window of `EMAIL_OTP_ACCOUNT_MAX_MAILS`'),
  MAIL_RATE_LIMIT: rateSetting('`forgot-password` and `send-otp` requests per client address (together), 429 beyond', '10/h')
}

type RecoveryRaw = Static<ReturnType<typeof Type.Object<typeof RecoveryConfigSchema>>>

export interface Bound { max: number, window: number }

export interface RecoveryConfig {
  passwordReset: { url: string, ttl: number } | undefined
  emailOtp: { ttl: number, maxAttempts: number, accountFailures: Bound, accountMails: Bound } | undefined
  mailRateLimit: { max: number, windowSeconds: number }
  /** also the second-factor failures a reset token survives */
  emailOtpMaxAttempts: number
}

function seconds (name: string, value: string): number {
  const result = parseDuration(value)
  if (result < 1) throw new ConfigError(`Invalid configuration: ${name} must be at least 1s`)
  return result
}

function resetUrl (url: string | undefined, production: boolean): string {
  if (url === undefined) throw new ConfigError('Invalid configuration: PASSWORD_RESET_URL is required when ENABLE_PASSWORD_RESET=true')
  if (!url.includes('{token}')) throw new ConfigError('Invalid configuration: PASSWORD_RESET_URL must contain {token}')
  let parsed: URL
  try {
    parsed = new URL(url.replaceAll('{token}', 'token'))
  } catch {
    throw new ConfigError('Invalid configuration: PASSWORD_RESET_URL must be an absolute URL')
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new ConfigError('Invalid configuration: PASSWORD_RESET_URL must be an http(s) URL')
  if (production && parsed.protocol !== 'https:') throw new ConfigError('Invalid configuration: PASSWORD_RESET_URL must use https in production')
  return url
}

/** In production a mail feature without SMTP_URL would log its links and codes, so it refuses. */
export function recoverySettings (raw: RecoveryRaw & { SMTP_URL?: string | undefined }, production: boolean): RecoveryConfig {
  const mailRateLimit = parseRate(raw.MAIL_RATE_LIMIT)
  if (mailRateLimit.max < 1) throw new ConfigError('Invalid configuration: MAIL_RATE_LIMIT must allow at least one request')
  for (const feature of ['ENABLE_PASSWORD_RESET', 'ENABLE_EMAIL_OTP'] as const) {
    if (raw[feature] && production && raw.SMTP_URL === undefined) {
      throw new ConfigError(`Invalid configuration: SMTP_URL is required in production when ${feature}=true`)
    }
  }
  return {
    passwordReset: raw.ENABLE_PASSWORD_RESET
      ? { url: resetUrl(raw.PASSWORD_RESET_URL, production), ttl: seconds('PASSWORD_RESET_TTL', raw.PASSWORD_RESET_TTL) }
      : undefined,
    emailOtp: raw.ENABLE_EMAIL_OTP
      ? {
          ttl: seconds('EMAIL_OTP_TTL', raw.EMAIL_OTP_TTL),
          maxAttempts: raw.EMAIL_OTP_MAX_ATTEMPTS,
          accountFailures: { max: raw.EMAIL_OTP_ACCOUNT_MAX_FAILURES, window: seconds('EMAIL_OTP_ACCOUNT_FAILURE_WINDOW', raw.EMAIL_OTP_ACCOUNT_FAILURE_WINDOW) },
          accountMails: { max: raw.EMAIL_OTP_ACCOUNT_MAX_MAILS, window: seconds('EMAIL_OTP_ACCOUNT_MAIL_WINDOW', raw.EMAIL_OTP_ACCOUNT_MAIL_WINDOW) }
        }
      : undefined,
    mailRateLimit,
    emailOtpMaxAttempts: raw.EMAIL_OTP_MAX_ATTEMPTS
  }
}
