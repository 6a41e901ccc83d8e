import { MailSender } from '../mail/sender.js'
import { testMail } from '../mail/templates.js'
import { createMailTransport } from '../mail/transport.js'
import { ruleFormats } from '../validation/index.js'
import { UsageError, type CommandGroup } from './command.js'
import { Failure } from './failure.js'

const MAIL_TEST_TIMEOUT_MS = 60_000

/** In development without SMTP_URL the mail goes to this log, on stderr (the server writes it to its log). */
const stderrLog = {
  info () {},
  warn (fields: object, message: string) { if ('mail' in fields) process.stderr.write(JSON.stringify({ ...fields, msg: message }) + '\n') }
}

/** gatehouse mail test --to <email> */
export const mailGroup: CommandGroup = {
  name: 'mail',
  commands: {
    test: {
      usage: 'mail test --to <email>',
      summary: 'queue a test mail and deliver it now through SMTP_URL; exits 1 with the server\'s answer if it fails',
      options: { to: { type: 'string' } },
      required: ['to'],
      help: ['--to       the address to send it to'],
      /**
       * Runs a sender of its own until the row is settled or its first attempt failed. A failed
       * mail stays queued (a running server retries it); the command reports why it failed.
       */
      async run ({ values }, context) {
        const to = values.to as string
        const isEmail = ruleFormats.email?.validate
        if (typeof isEmail === 'function' && !isEmail(to)) throw new UsageError('--to must be a valid email address')
        const { config, store, services } = await context()
        if (config.production && config.mail.smtp === undefined) throw new Failure('SMTP_URL is unset: in production no mail is sent')
        const sender = new MailSender({
          outbox: store.mailOutbox,
          transport: createMailTransport(config.mail, config.production, stderrLog),
          events: services.events,
          log: stderrLog
        })
        const id = await store.mailOutbox.enqueue(testMail({ to }))
        sender.start()
        try {
          const deadline = Date.now() + MAIL_TEST_TIMEOUT_MS
          for (;;) {
            const row = await store.mailOutbox.get(id)
            if (row?.sentAt) {
              const text = `sent a test mail to ${to}${config.mail.smtp === undefined ? ' (to the log: SMTP_URL is unset)' : ''}`
              return { text, json: { sent: true, to, id } }
            }
            if (row?.lastError) throw new Failure(`delivery failed: ${row.lastError}`)
            if (Date.now() > deadline) throw new Failure(`no answer from the SMTP server within ${MAIL_TEST_TIMEOUT_MS / 1000} s`)
            await new Promise((resolve) => setTimeout(resolve, 50))
          }
        } finally {
          await sender.close()
        }
      }
    }
  }
}
