import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { createUser } from '../../../helper.js'
import { ACCEPTED, post, queued, recoveryApp } from './support.js'

/** What a client can compare between two answers: status, body bytes and the header names. */
function shape (res: LightMyRequestResponse) {
  return { status: res.statusCode, body: res.body, headers: Object.keys(res.headers).sort() }
}

/** The rate-limit headers count down with every request: same names, values that move. */
function withoutCounts (res: LightMyRequestResponse) {
  const { date, 'ratelimit-remaining': _r, 'ratelimit-reset': _s, ...rest } = res.headers
  return rest
}

for (const [url, extra] of [['/auth/forgot-password', {}], ['/auth/send-otp', { purpose: 'login' }]] as const) {
  t.test(`${url} answers a known and an unknown address with the same bytes`, async (t) => {
    const app = await recoveryApp(t)
    const user = await createUser(app, { email: 'known@example.com' })
    const known = await post(app, url, { email: user.email, ...extra })
    const unknown = await post(app, url, { email: 'nobody@example.com', ...extra })
    t.equal(known.statusCode, 202)
    t.same(known.json(), ACCEPTED)
    t.same(shape(unknown), shape(known))
    t.same(withoutCounts(unknown), withoutCounts(known), 'the header values too, but for the countdown and the date')
    const mails = await queued(app)
    t.same(mails.map((mail) => mail.to), ['known@example.com'], 'a mail only for the account')
  })
}

t.test('at most one reset mail per address per minute, silently', async (t) => {
  const app = await recoveryApp(t)
  const user = await createUser(app)
  const answers = []
  for (let i = 0; i < 3; i++) answers.push(await post(app, '/auth/forgot-password', { email: user.email }))
  t.same(answers.map(shape).map(({ status, body }) => ({ status, body })), Array(3).fill({ status: 202, body: JSON.stringify(ACCEPTED) }))
  t.equal((await queued(app, user.email)).length, 1, 'one mail')
  // codes are not counted against it
  t.equal((await post(app, '/auth/send-otp', { email: user.email, purpose: 'login' })).statusCode, 202)
  t.equal((await queued(app, user.email)).length, 2)
  // the negative control: once the minute is over, another mail goes
  await app.counters.reset(`reset-mail:${user.email}`)
  t.equal((await post(app, '/auth/forgot-password', { email: user.email })).statusCode, 202)
  t.equal((await queued(app, user.email)).length, 3)
})

t.test('MAIL_RATE_LIMIT counts forgot-password and send-otp per client address: 429 with Retry-After beyond', async (t) => {
  const app = await recoveryApp(t, { MAIL_RATE_LIMIT: '2/h' })
  t.equal((await post(app, '/auth/forgot-password', { email: 'a@example.com' })).statusCode, 202)
  t.equal((await post(app, '/auth/send-otp', { email: 'b@example.com', purpose: 'verify_email' })).statusCode, 202)
  const limited = await post(app, '/auth/forgot-password', { email: 'c@example.com' })
  t.equal(limited.statusCode, 429)
  t.same(limited.json(), { error: 'Too Many Requests', message: 'Too many attempts, try again later', code: 'rate_limited' })
  const retry = Number(limited.headers['retry-after'])
  t.ok(retry > 3500 && retry <= 3600, `Retry-After ${retry}`)
  const otp = await post(app, '/auth/send-otp', { email: 'd@example.com', purpose: 'login' })
  t.equal(otp.statusCode, 429, 'the limit spans both routes')
  const other = await app.inject({ method: 'POST', url: '/auth/forgot-password', payload: { email: 'e@example.com' }, remoteAddress: '192.0.2.9' })
  t.equal(other.statusCode, 202, 'another client address has its own count')
})
