import { isIP } from 'node:net'
import { Type, type Static, type TObject } from '@sinclair/typebox'
import { ConfigError } from '../errors.js'

const ADDRESS = '[^@\\s<>"]+@[^@\\s<>"]+'
const MAIL_FROM_PATTERN = `^([^<>\\r\\n",;]*<${ADDRESS}>|"[^"\\r\\n]*" *<${ADDRESS}>|${ADDRESS})$`

export const MailSettingsSchema = {
  SMTP_URL: Type.Optional(Type.String({
    pattern: '^smtps?://',
    maxLength: 2048,
    examples: ['smtp://user:password@mail.example.com:587', 'smtps://mail.example.com:465', 'smtp://127.0.0.1:8025'],
    description: 'where mail is delivered: `smtp://[user:pass@]host[:port]` (STARTTLS whenever the server offers it; ' +
      'add `?requireTLS=true` to refuse a server that does not) or `smtps://…` (TLS from the first byte). In production ' +
      'mail to a host that is not a loopback address is never sent without TLS. Unset in development: each mail, link ' +
      'or code included, is written to the log instead; unset in production: no mail is sent'
  })),
  MAIL_FROM: Type.String({
    default: 'gatehouse <no-reply@localhost>',
    pattern: MAIL_FROM_PATTERN,
    maxLength: 320,
    description: 'the `From` of every mail: `Name <address>` or a bare address'
  })
}

type RawMailSettings = Static<TObject<typeof MailSettingsSchema>>

export interface SmtpSettings {
  host: string
  port: number
  secure: boolean
  /** never spoken to in plaintext */
  requireTLS: boolean
  auth: { user: string, pass: string } | undefined
}

export interface MailConfig {
  smtp: SmtpSettings | undefined
  from: string
}

export function mailConfigured (config: { mail: MailConfig }): boolean {
  return config.mail.smtp !== undefined
}

/** A `.localhost` name is not loopback: a resolver may answer it with any address. */
export function isLoopback (host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase()
  if (bare === 'localhost' || bare === 'localhost.') return true
  if (isIP(bare) === 4) return bare.startsWith('127.')
  return bare === '::1' || bare === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(bare)
}

function invalid (message: string): never {
  throw new ConfigError(`Invalid configuration: SMTP_URL ${message}`)
}

/** Never handed to nodemailer as a URL, whose query string could switch certificate checks off. */
export function parseSmtpUrl (value: string, production: boolean): SmtpSettings {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    invalid('is not a valid URL')
  }
  const secure = url.protocol === 'smtps:'
  if (url.hostname === '') invalid('has no host')
  if (url.pathname !== '' && url.pathname !== '/') invalid('must not have a path')
  if (url.hash !== '') invalid('must not have a fragment')
  let requireTLS = false
  for (const [key, setting] of url.searchParams) {
    if (key !== 'requireTLS' || (setting !== 'true' && setting !== 'false')) invalid(`accepts only the query parameter requireTLS=true (found ${key})`)
    requireTLS = setting === 'true'
  }
  if (secure && requireTLS) invalid('asks for STARTTLS (requireTLS) on smtps://, which is TLS already')
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (production && !secure && !isLoopback(host)) requireTLS = true
  const user = decodeURIComponent(url.username)
  const auth = user === '' ? undefined : { user, pass: decodeURIComponent(url.password) }
  return { host, port: url.port === '' ? (secure ? 465 : 587) : Number(url.port), secure, requireTLS, auth }
}

export function mailSettings (raw: RawMailSettings, production: boolean): MailConfig {
  if (/[\r\n]/.test(raw.MAIL_FROM)) throw new ConfigError('Invalid configuration: MAIL_FROM must be one line')
  return {
    smtp: raw.SMTP_URL === undefined ? undefined : parseSmtpUrl(raw.SMTP_URL, production),
    from: raw.MAIL_FROM
  }
}
