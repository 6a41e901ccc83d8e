import type { MailConfig, SmtpSettings } from '../config/mail.js'
import type { OutgoingMail } from '../db/mail-outbox.js'
import type { CoreLogger } from '../logging/logger.js'

export interface MailTransport {
  readonly kind: 'smtp' | 'log'
  send (mail: OutgoingMail): Promise<void>
  close (): void
}

export interface TransportOptions {
  /** Extra CAs (PEM) besides Node's own; tests pass their self-signed certificate's CA. */
  ca?: string
}

/** A server that stalls holds a sender slot this long at most, never a request. */
const CONNECTION_TIMEOUT_MS = 10_000
const GREETING_TIMEOUT_MS = 10_000
const SOCKET_TIMEOUT_MS = 30_000

/** STARTTLS whenever offered, and then a bad certificate is an error, never a fallback to plaintext. */
function smtpTransport (smtp: SmtpSettings, from: string, { ca }: TransportOptions): MailTransport {
  // nodemailer is loaded only when SMTP is configured; a start without it never needs it
  const transporter = import('nodemailer').then(({ createTransport }) => createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    requireTLS: smtp.requireTLS,
    ...(smtp.auth !== undefined && { auth: smtp.auth }),
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    greetingTimeout: GREETING_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
    tls: { rejectUnauthorized: true, minVersion: 'TLSv1.2', ...(ca !== undefined && { ca }) },
    disableFileAccess: true,
    disableUrlAccess: true
  }))
  return {
    kind: 'smtp',
    async send (mail) {
      await (await transporter).sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html })
    },
    // a transporter that failed to load has nothing to close, and its error is the send's
    close () { transporter.then((t) => { t.close() }, () => {}) }
  }
}

/** Development without SMTP_URL: never built in production. */
function logTransport (from: string, log: Pick<CoreLogger, 'warn'>): MailTransport {
  return {
    kind: 'log',
    async send (mail) {
      log.warn({ mail: { from, to: mail.to, subject: mail.subject, text: mail.text } }, 'mail written to the log, not sent: SMTP_URL is unset (development only)')
    },
    close () {}
  }
}

export function createMailTransport (mail: MailConfig, production: boolean, log: Pick<CoreLogger, 'warn'>, options: TransportOptions = {}): MailTransport | undefined {
  if (mail.smtp !== undefined) return smtpTransport(mail.smtp, mail.from, options)
  return production ? undefined : logTransport(mail.from, log)
}
