import t from 'tap'
import { isLoopback, mailConfigured } from '../../../src/config/mail.js'
import { errorOf, load } from './support.js'

const PRODUCTION_SECRET = 'hXK0Dn4oICBmT860JonwhNbrAU/mliZVZw7hYCVxt+x7NfL/'

t.test('by default no SMTP server is set and mail comes from gatehouse <no-reply@localhost>', async (t) => {
  const config = load(t, {})
  t.strictSame(config.mail, { smtp: undefined, from: 'gatehouse <no-reply@localhost>' })
  t.equal(mailConfigured(config), false)
})

t.test('SMTP_URL forms: smtp:// with STARTTLS when offered, smtps://, credentials, requireTLS, default ports', async (t) => {
  const cases: Array<[string, unknown]> = [
    ['smtp://127.0.0.1:8025', { host: '127.0.0.1', port: 8025, secure: false, requireTLS: false, auth: undefined }],
    ['smtp://mail.example.com', { host: 'mail.example.com', port: 587, secure: false, requireTLS: false, auth: undefined }],
    ['smtps://mail.example.com', { host: 'mail.example.com', port: 465, secure: true, requireTLS: false, auth: undefined }],
    ['smtp://us%40er:p%3Ass@mail.example.com:2525/?requireTLS=true', { host: 'mail.example.com', port: 2525, secure: false, requireTLS: true, auth: { user: 'us@er', pass: 'p:ss' } }],
    ['smtp://[::1]:25', { host: '::1', port: 25, secure: false, requireTLS: false, auth: undefined }]
  ]
  for (const [url, smtp] of cases) {
    const config = load(t, { SMTP_URL: url })
    t.strictSame(config.mail.smtp, smtp, url)
    t.equal(mailConfigured(config), true)
  }
})

t.test('in production TLS is required for every host that is not a loopback address, never for loopback', async (t) => {
  const production = { APP_ENV: 'production', JWT_SECRET: PRODUCTION_SECRET }
  t.equal(load(t, { ...production, SMTP_URL: 'smtp://mail.example.com:587' }).mail.smtp?.requireTLS, true)
  t.equal(load(t, { ...production, SMTP_URL: 'smtp://10.0.0.5:25' }).mail.smtp?.requireTLS, true)
  t.equal(load(t, { ...production, SMTP_URL: 'smtp://mail.example.com:587?requireTLS=false' }).mail.smtp?.requireTLS, true, 'the URL cannot turn it off')
  t.equal(load(t, { ...production, SMTP_URL: 'smtp://127.0.0.1:25' }).mail.smtp?.requireTLS, false)
  t.equal(load(t, { ...production, SMTP_URL: 'smtp://localhost:25' }).mail.smtp?.requireTLS, false)
  t.equal(load(t, { ...production, SMTP_URL: 'smtp://mail.localhost:25' }).mail.smtp?.requireTLS, true, 'a name under .localhost is not loopback')
  t.equal(load(t, { ...production, SMTP_URL: 'smtps://mail.example.com' }).mail.smtp?.secure, true)
  // the negative control: the same host in development is left to STARTTLS when offered
  t.equal(load(t, { SMTP_URL: 'smtp://mail.example.com:587' }).mail.smtp?.requireTLS, false)
})

t.test('loopback means localhost, 127.0.0.0/8 and ::1 only: a name under .localhost is not one', async (t) => {
  for (const host of ['localhost', 'LOCALHOST', 'localhost.', '127.0.0.1', '127.8.9.10', '::1', '[::1]', '::ffff:127.0.0.1']) t.equal(isLoopback(host), true, host)
  // a *.localhost name is only as local as the resolver makes it (/etc/hosts, a DNS server that answers it)
  for (const host of ['mail.localhost', 'a.b.localhost', 'MAIL.LOCALHOST', 'localhost.example.com', '10.0.0.1', '128.0.0.1', '::2', 'example.com', '0.0.0.0', '::']) t.equal(isLoopback(host), false, host)
})

t.test('a bad SMTP_URL or MAIL_FROM stops the start with a message naming it', async (t) => {
  t.match(errorOf(t, { SMTP_URL: 'http://mail.example.com' }), /SMTP_URL/)
  t.match(errorOf(t, { SMTP_URL: 'smtp://' }), /SMTP_URL/)
  t.equal(errorOf(t, { SMTP_URL: 'smtp://mail.example.com/path' }), 'Invalid configuration: SMTP_URL must not have a path')
  t.equal(errorOf(t, { SMTP_URL: 'smtp://mail.example.com#x' }), 'Invalid configuration: SMTP_URL must not have a fragment')
  t.equal(errorOf(t, { SMTP_URL: 'smtp://mail.example.com?tls.rejectUnauthorized=false' }),
    'Invalid configuration: SMTP_URL accepts only the query parameter requireTLS=true (found tls.rejectUnauthorized)')
  t.equal(errorOf(t, { SMTP_URL: 'smtps://mail.example.com?requireTLS=true' }),
    'Invalid configuration: SMTP_URL asks for STARTTLS (requireTLS) on smtps://, which is TLS already')
  t.equal(errorOf(t, { SMTP_URL: 'smtp://mail.exa mple.com' }), 'Invalid configuration: SMTP_URL is not a valid URL')
  for (const from of ['not an address', 'gatehouse <no-reply>', 'a@b.c\r\nBcc: x@y.z', 'x <a@b.c> y', '<a@b.c', '', 'Example, Inc <a@b.c>']) {
    t.match(errorOf(t, { MAIL_FROM: from }), /MAIL_FROM/, JSON.stringify(from))
  }
  for (const from of ['no-reply@example.com', 'Example Auth <auth@example.com>', '"Example, Inc." <auth@example.com>', '<auth@example.com>']) {
    t.equal(load(t, { MAIL_FROM: from }).mail.from, from)
  }
})
