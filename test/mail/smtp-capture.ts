import { EventEmitter, once } from 'node:events'
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser'
import { SMTPServer, type SMTPServerOptions } from 'smtp-server'
import type { TestContext } from '../helper.js'

/** One message as a server received it: the envelope, and the message parsed by mailparser. */
export interface CapturedMail {
  /** MAIL FROM and RCPT TO of the SMTP session */
  envelope: { from: string, to: string[] }
  /** the From and To headers, as mailparser reads them */
  from: string
  to: string
  subject: string
  text: string
  html: string
  /** whether the session was encrypted (STARTTLS or implicit TLS) */
  secure: boolean
  parsed: ParsedMail
}

function addresses (value: AddressObject | AddressObject[] | undefined): string {
  if (value === undefined) return ''
  return (Array.isArray(value) ? value : [value]).map((a) => a.text).join(', ')
}

export async function toCaptured (parsed: ParsedMail, envelope: CapturedMail['envelope'], secure: boolean): Promise<CapturedMail> {
  return {
    envelope,
    from: addresses(parsed.from),
    to: addresses(parsed.to),
    subject: parsed.subject ?? '',
    text: parsed.text ?? '',
    html: typeof parsed.html === 'string' ? parsed.html : '',
    secure,
    parsed
  }
}

export interface CaptureOptions {
  /** a certificate: STARTTLS is offered with it (without one, the server offers no STARTTLS: plaintext only) */
  tls?: { key: string, cert: string }
  /** implicit TLS from the first byte (smtps) with `tls` */
  secure?: boolean
  /** the server holds its answer to DATA this long (a stalling server) */
  stallDataMs?: number
  /** the answer to RCPT TO for a recipient, e.g. to refuse one for good */
  refuseRecipient?: (address: string) => { code: number, message: string } | undefined
}

export interface CaptureServer {
  port: number
  /** the SMTP_URL naming this server */
  url: string
  /** every message received, in order */
  readonly mails: CapturedMail[]
  /** resolves when a client has started sending a message (DATA), e.g. to act while the server stalls it */
  dataStarted (ms?: number): Promise<void>
  /** the first message (already received or still to come) that matches, or a rejection after `ms` */
  waitForMail (predicate?: (mail: CapturedMail) => boolean, ms?: number): Promise<CapturedMail>
  /** stops listening (the port stays this server's: `start` listens on it again) */
  stop (): Promise<void>
  start (): Promise<void>
}

/**
 * A real SMTP server in the test process (nodemailer's smtp-server) on 127.0.0.1 and a free port;
 * each message is parsed with mailparser. Stopped at teardown.
 */
export async function startCaptureServer (t: TestContext, options: CaptureOptions = {}): Promise<CaptureServer> {
  const mails: CapturedMail[] = []
  let started = 0
  const arrived = new EventEmitter()
  const serverOptions: SMTPServerOptions = {
    authOptional: true,
    logger: false,
    ...(options.tls === undefined ? { disabledCommands: ['STARTTLS'] } : { key: options.tls.key, cert: options.tls.cert }),
    secure: options.secure === true,
    onRcptTo (address, session, callback) {
      const refusal = options.refuseRecipient?.(address.address)
      if (refusal === undefined) { callback(); return }
      callback(Object.assign(new Error(refusal.message), { responseCode: refusal.code }))
    },
    onData (stream, session, callback) {
      started += 1
      arrived.emit('data')
      const envelope = {
        from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
        to: session.envelope.rcptTo.map((r) => r.address)
      }
      const secure = session.secure
      simpleParser(stream).then(async (parsed) => {
        if (options.stallDataMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.stallDataMs))
        const mail = await toCaptured(parsed, envelope, secure)
        mails.push(mail)
        arrived.emit('mail', mail)
        callback()
      }, callback)
    }
  }
  let server = new SMTPServer(serverOptions)
  server.listen(0, '127.0.0.1')
  await once(server.server, 'listening')
  const { port } = server.server.address() as { port: number }
  let listening = true

  async function stop (): Promise<void> {
    if (!listening) return
    listening = false
    await new Promise<void>((resolve) => { server.close(() => { resolve() }) })
  }
  async function start (): Promise<void> {
    if (listening) return
    server = new SMTPServer(serverOptions)
    server.listen(port, '127.0.0.1')
    await once(server.server, 'listening')
    listening = true
  }
  t.teardown(stop)

  async function waitForMail (predicate: (mail: CapturedMail) => boolean = () => true, ms = 15_000): Promise<CapturedMail> {
    const found = mails.find(predicate)
    if (found !== undefined) return found
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => { arrived.off('mail', look); reject(new Error(`no matching mail within ${ms} ms (${mails.length} received)`)) }, ms)
      function look (mail: CapturedMail) {
        if (!predicate(mail)) return
        clearTimeout(timer)
        arrived.off('mail', look)
        resolve(mail)
      }
      arrived.on('mail', look)
    })
  }

  async function dataStarted (ms = 15_000): Promise<void> {
    if (started > 0) return
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => { reject(new Error(`no DATA within ${ms} ms`)) }, ms)
      arrived.once('data', () => { clearTimeout(timer); resolve() })
    })
  }

  return { port, dataStarted, url: `${options.secure === true ? 'smtps' : 'smtp'}://127.0.0.1:${port}`, mails, waitForMail, stop, start }
}
