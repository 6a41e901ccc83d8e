import t from 'tap'
import { errorOf, load } from './support.js'

const STRONG_SECRET = 'k4J9x2Qw7Lm3Pz8Rt6Vb1Nc5Hy0Gd-Fs_ErTyUiOp'
const PRODUCTION = { APP_ENV: 'production', JWT_SECRET: STRONG_SECRET }

t.test('recovery is off by default, with the documented lifetimes and mail rate', async (t) => {
  const config = load(t, {})
  t.equal(config.passwordReset, undefined)
  t.equal(config.emailOtp, undefined)
  t.same(config.mailRateLimit, { max: 10, windowSeconds: 3600 })
  const on = load(t, { ENABLE_PASSWORD_RESET: true, PASSWORD_RESET_URL: 'http://localhost:3000/reset#token={token}', ENABLE_EMAIL_OTP: true })
  t.same(on.passwordReset, { url: 'http://localhost:3000/reset#token={token}', ttl: 1800 })
  t.same(on.emailOtp, { ttl: 600, maxAttempts: 5, accountFailures: { max: 10, window: 86_400 }, accountMails: { max: 5, window: 3600 } })
})

t.test('a reset feature without PASSWORD_RESET_URL, or with a bad one, refuses to start naming the setting', async (t) => {
  t.equal(errorOf(t, { ENABLE_PASSWORD_RESET: true }), 'Invalid configuration: PASSWORD_RESET_URL is required when ENABLE_PASSWORD_RESET=true')
  t.equal(errorOf(t, { ENABLE_PASSWORD_RESET: true, PASSWORD_RESET_URL: 'https://app.example.com/reset' }), 'Invalid configuration: PASSWORD_RESET_URL must contain {token}')
  t.equal(errorOf(t, { ENABLE_PASSWORD_RESET: true, PASSWORD_RESET_URL: '/reset#{token}' }), 'Invalid configuration: PASSWORD_RESET_URL must be an absolute URL')
  t.equal(errorOf(t, { ENABLE_PASSWORD_RESET: true, PASSWORD_RESET_URL: 'javascript:{token}' }), 'Invalid configuration: PASSWORD_RESET_URL must be an http(s) URL')
  t.equal(errorOf(t, { ENABLE_PASSWORD_RESET: true, PASSWORD_RESET_URL: 'http://a.example/#{token}', PASSWORD_RESET_TTL: '0s' }), 'Invalid configuration: PASSWORD_RESET_TTL must be at least 1s')
  t.equal(errorOf(t, { ENABLE_EMAIL_OTP: true, EMAIL_OTP_TTL: '0' }), 'Invalid configuration: EMAIL_OTP_TTL must be at least 1s')
  t.equal(errorOf(t, { MAIL_RATE_LIMIT: '0/h' }), 'Invalid configuration: MAIL_RATE_LIMIT must allow at least one request')
  // off, the URL is not needed
  t.equal(load(t, { ENABLE_PASSWORD_RESET: false }).passwordReset, undefined)
})
t.test('in production a mail feature needs SMTP_URL and the reset link https', async (t) => {
  t.equal(errorOf(t, { ...PRODUCTION, ENABLE_EMAIL_OTP: true }), 'Invalid configuration: SMTP_URL is required in production when ENABLE_EMAIL_OTP=true')
  t.equal(errorOf(t, { ...PRODUCTION, ENABLE_PASSWORD_RESET: true, PASSWORD_RESET_URL: 'https://app.example.com/reset#token={token}' }),
    'Invalid configuration: SMTP_URL is required in production when ENABLE_PASSWORD_RESET=true')
  const smtp = { SMTP_URL: 'smtps://mail.example.com:465' }
  t.equal(errorOf(t, { ...PRODUCTION, ...smtp, ENABLE_PASSWORD_RESET: true, PASSWORD_RESET_URL: 'http://app.example.com/reset#token={token}' }),
    'Invalid configuration: PASSWORD_RESET_URL must use https in production')
  // the negative control: the same with https starts
  const ok = load(t, { ...PRODUCTION, ...smtp, ENABLE_PASSWORD_RESET: true, PASSWORD_RESET_URL: 'https://app.example.com/reset#token={token}' })
  t.equal(ok.passwordReset?.url, 'https://app.example.com/reset#token={token}')
})
