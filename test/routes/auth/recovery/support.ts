import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import { MailOutboxRepository, type OutboxEntry } from '../../../../src/db/mail-outbox.js'
import { build, type BuildHooks, type TestContext } from '../../../helper.js'
import { startCaptureServer, type CapturedMail } from '../../../mail/smtp-capture.js'

/*
 * What the recovery suites share: an app with both features on that delivers its mail to a real
 * SMTP server in the test process (smtp-server, messages parsed by mailparser). What was queued is
 * read from the real outbox (its recipients stay after delivery), what arrived from the server.
 */

export const RESET_URL = 'https://app.example.com/reset#token={token}'
export const ACCEPTED = { message: 'If an account exists for this address, a mail is on its way' }
export const INVALID_RESET_TOKEN = { error: 'Bad Request', message: 'The reset link is invalid or has expired', code: 'invalid_reset_token' }
export const INVALID_OTP = { error: 'Bad Request', message: 'The code is invalid or has expired', code: 'invalid_otp' }
export const NEW_PASSWORD = 'Brand-New-Secret-42'

export const RECOVERY_ON = { ENABLE_PASSWORD_RESET: true, PASSWORD_RESET_URL: RESET_URL, ENABLE_EMAIL_OTP: true }

/** Where each app's mail arrives: a server of its own, or another SMTP stack a test passes. */
export interface Mailbox { waitForMail (predicate?: (mail: CapturedMail) => boolean, ms?: number): Promise<CapturedMail> }
const mailboxes = new WeakMap<FastifyInstance, Mailbox>()

export async function recoveryApp (t: TestContext, values: Record<string, unknown> = {}, mailbox?: Mailbox & { url: string }, hooks: BuildHooks = {}): Promise<FastifyInstance> {
  const server = mailbox ?? await startCaptureServer(t)
  const app = await build(t, { ...RECOVERY_ON, SMTP_URL: server.url, ...values }, hooks)
  mailboxes.set(app, server)
  return app
}

/** The `n`th mail (1-based) delivered to `to`, waiting for it. */
export async function delivered (app: FastifyInstance, to: string, n: number): Promise<CapturedMail> {
  const mailbox = mailboxes.get(app)
  if (mailbox === undefined) throw new Error('not an app of recoveryApp()')
  let seen = 0
  return await mailbox.waitForMail((mail) => mail.envelope.to.includes(to) && ++seen === n)
}

/** The latest mail queued to `to`, once delivered. */
export async function latestMail (app: FastifyInstance, to: string): Promise<CapturedMail> {
  const count = (await queued(app, to)).length
  if (count === 0) throw new Error(`no mail queued to ${to}`)
  return await delivered(app, to, count)
}

/** Every mail queued so far to `to` (all when omitted), oldest first. */
export async function queued (app: FastifyInstance, to?: string): Promise<OutboxEntry[]> {
  await app.services.recovery.settled()
  const all = await app.store.mailOutbox.list()
  return to === undefined ? all : all.filter((mail) => mail.to === to)
}

/** The token of the reset link in a mail's text (the link is PASSWORD_RESET_URL with `{token}` replaced). */
export function resetTokenIn (text: string | null, url = RESET_URL): string {
  const [before = '', after = ''] = url.split('{token}')
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/#]/g, '\\$&')
  const match = new RegExp(`${escape(before)}([A-Za-z0-9_-]+)${escape(after)}`).exec(text ?? '')
  if (match?.[1] === undefined) throw new Error(`no reset link in ${text ?? ''}`)
  return match[1]
}

/** The six-digit code of an email-code mail's text. */
export function codeIn (text: string | null): string {
  const match = /^(\d{6})$/m.exec(text ?? '')
  if (match?.[1] === undefined) throw new Error(`no code in ${text ?? ''}`)
  return match[1]
}

export async function post (app: FastifyInstance, url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url, payload, headers })
}

/** Asks for a reset mail and returns the token it carries. */
export async function resetTokenFor (app: FastifyInstance, email: string): Promise<string> {
  const res = await post(app, '/auth/forgot-password', { email })
  if (res.statusCode !== 202) throw new Error(`forgot-password: ${res.statusCode} ${res.body}`)
  return resetTokenIn((await latestMail(app, email)).text)
}

/** Asks for an email code and returns it. */
export async function codeFor (app: FastifyInstance, email: string, purpose: 'login' | 'verify_email'): Promise<string> {
  const res = await post(app, '/auth/send-otp', { email, purpose })
  if (res.statusCode !== 202) throw new Error(`send-otp: ${res.statusCode} ${res.body}`)
  return codeIn((await latestMail(app, email)).text)
}

/** The next `count` outbox writes fail for real (the transaction rolls back), as a full disk or a dropped connection makes them fail. */
export function failOutboxWrites (t: Pick<Test, 'intercept'>, count = 1): void {
  const enqueue = MailOutboxRepository.prototype.enqueue
  let failures = count
  t.intercept(MailOutboxRepository.prototype, 'enqueue', {
    value: async function (this: MailOutboxRepository, ...args: Parameters<typeof enqueue>) {
      if (failures-- > 0) throw new Error('disk I/O error')
      return await Reflect.apply(enqueue, this, args)
    }
  })
}
