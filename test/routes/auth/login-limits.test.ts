// Proves src/limits/throttle.ts and src/limits/address-group.ts.
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { build, createUser } from '../../helper.js'

/*
 * Per-address limits count an IPv6 client by its subnet (IPV6_SUBNET_PREFIX, /64 by default),
 * since one subscriber holds a whole /64; and a ceiling per account across all addresses
 * (LOGIN_ACCOUNT_MAX_FAILURES) stops a guesser spread over many addresses, without locking the
 * user out of an address they signed in from before.
 */

const RATE_LIMITED = { error: 'Too Many Requests', message: 'Too many attempts, try again later', code: 'rate_limited' }
const BAD_LOGIN = { error: 'Unauthorized', message: 'Invalid email or password', code: 'invalid_credentials' }
const PROXY = { TRUST_PROXY: '127.0.0.1' }

/** A login sent by the trusted proxy on behalf of `client`. */
async function viaProxy (app: FastifyInstance, client: string, email: string, password: string) {
  return await app.inject({ method: 'POST', url: '/auth/login', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': client }, payload: { email, password } })
}

function statuses (responses: Array<{ statusCode: number }>): Record<number, number> {
  const counts: Record<number, number> = {}
  for (const { statusCode } of responses) counts[statusCode] = (counts[statusCode] ?? 0) + 1
  return counts
}

t.test('40 addresses of one IPv6 /64 share one failure budget for an email', async (t) => {
  const app = await build(t, { ...PROXY, LOGIN_MAX_FAILURES: 5, LOGIN_RATE_LIMIT: '1000/m' })
  const user = await createUser(app)
  const responses = []
  for (let i = 1; i <= 40; i++) responses.push(await viaProxy(app, `2001:db8:aa:1::${i.toString(16)}`, user.email, 'wrong-password'))
  t.same(statuses(responses), { 401: 5, 429: 35 })
  t.same(responses[4]?.json(), BAD_LOGIN)
  t.same(responses[5]?.json(), RATE_LIMITED)
  const other = await viaProxy(app, '2001:db8:aa:2::1', user.email, user.password)
  t.equal(other.statusCode, 200, 'the next /64 has a budget of its own (the control)')
})

t.test('40 addresses of one IPv6 /64 share one LOGIN_RATE_LIMIT budget', async (t) => {
  const app = await build(t, { ...PROXY, LOGIN_MAX_FAILURES: 100, LOGIN_RATE_LIMIT: '3/m' })
  const responses = []
  for (let i = 1; i <= 40; i++) responses.push(await viaProxy(app, `2001:db8:bb:1:${i.toString(16)}::1`, `u${i}@example.com`, 'x'))
  t.same(statuses(responses), { 401: 3, 429: 37 })
  t.same(responses[3]?.json(), RATE_LIMITED)
  t.equal(responses[3]?.headers['ratelimit-remaining'], '0')
  const other = await viaProxy(app, '2001:db8:bb:2::1', 'u1@example.com', 'x')
  t.equal(other.statusCode, 401, 'another /64 is not limited by the first one (the control)')
  t.equal(other.headers['ratelimit-remaining'], '2')
})

t.test('IPV6_SUBNET_PREFIX sets the size of the group: /128 counts each address alone', async (t) => {
  const app = await build(t, { ...PROXY, LOGIN_MAX_FAILURES: 2, LOGIN_RATE_LIMIT: '1000/m', IPV6_SUBNET_PREFIX: 128 })
  const user = await createUser(app)
  for (let i = 1; i <= 2; i++) t.equal((await viaProxy(app, '2001:db8:cc::1', user.email, 'wrong-password')).statusCode, 401)
  t.equal((await viaProxy(app, '2001:db8:cc::1', user.email, user.password)).statusCode, 429)
  t.equal((await viaProxy(app, '2001:db8:cc::2', user.email, user.password)).statusCode, 200)
})

t.test('an IPv4 client seen over an IPv6 socket (::ffff:a.b.c.d) counts as its IPv4 address, not as one /64 with every other', async (t) => {
  const app = await build(t, { LOGIN_MAX_FAILURES: 2 })
  const user = await createUser(app)
  const attempt = async (remoteAddress: string, password: string) => await app.inject({ method: 'POST', url: '/auth/login', remoteAddress, payload: { email: user.email, password } })
  await attempt('::ffff:198.51.100.4', 'wrong-password')
  await attempt('198.51.100.4', 'wrong-password')
  t.equal((await attempt('::ffff:198.51.100.4', user.password)).statusCode, 429)
  t.equal((await attempt('::ffff:198.51.100.5', user.password)).statusCode, 200, 'the next IPv4 address is another client')
})

t.test('LOGIN_ACCOUNT_MAX_FAILURES stops a guesser spread over many addresses, not the user at an address they signed in from', async (t) => {
  const app = await build(t, { LOGIN_MAX_FAILURES: 5, LOGIN_ACCOUNT_MAX_FAILURES: 10, LOGIN_RATE_LIMIT: '1000/m' })
  const user = await createUser(app)
  const attempt = async (remoteAddress: string, password: string, email = user.email) => await app.inject({ method: 'POST', url: '/auth/login', remoteAddress, payload: { email, password } })
  t.equal((await attempt('203.0.113.50', user.password)).statusCode, 200, 'the user signs in from home before the attack')

  const guesses = []
  for (let i = 1; i <= 30; i++) guesses.push(await attempt(`198.51.100.${i}`, 'wrong-password'))
  t.same(statuses(guesses), { 401: 10, 429: 20 }, 'one guess from each of 30 addresses: 10 checked, then refused')
  t.same(guesses[10]?.json(), RATE_LIMITED)
  t.ok(Number(guesses[10]?.headers['retry-after']) > 800, 'Retry-After is the rest of the account window')

  const stranger = await attempt('192.0.2.77', user.password)
  t.equal(stranger.statusCode, 429, 'the right password from an address never used is refused while the ceiling holds: the price')
  const home = await attempt('203.0.113.50', user.password)
  t.equal(home.statusCode, 200, 'the user, from an address they signed in from, still gets in')

  const other = await attempt('198.51.100.1', 'x', 'someone-else@example.com')
  t.equal(other.statusCode, 401, 'the ceiling is per account: other accounts are untouched')
})

t.test('an address the user signed in from is still bound by the per-address limit', async (t) => {
  const app = await build(t, { LOGIN_MAX_FAILURES: 3, LOGIN_ACCOUNT_MAX_FAILURES: 1, LOGIN_RATE_LIMIT: '1000/m' })
  const user = await createUser(app)
  const attempt = async (password: string) => await app.inject({ method: 'POST', url: '/auth/login', remoteAddress: '203.0.113.60', payload: { email: user.email, password } })
  t.equal((await attempt(user.password)).statusCode, 200)
  const guesses = []
  for (let i = 0; i < 5; i++) guesses.push(await attempt('wrong-password'))
  t.same(statuses(guesses), { 401: 3, 429: 2 }, 'exempt from the account ceiling, not from the address limit')
})

t.test('IPV6_SUBNET_PREFIX, LOGIN_ACCOUNT_MAX_FAILURES and LOGIN_ACCOUNT_FAILURE_WINDOW are read and checked', async (t) => {
  await t.rejects(build(t, { IPV6_SUBNET_PREFIX: 0 }), { message: 'Invalid configuration: IPV6_SUBNET_PREFIX must be >= 1' })
  await t.rejects(build(t, { IPV6_SUBNET_PREFIX: 129 }), { message: 'Invalid configuration: IPV6_SUBNET_PREFIX must be <= 128' })
  await t.rejects(build(t, { LOGIN_ACCOUNT_MAX_FAILURES: 0 }), { message: 'Invalid configuration: LOGIN_ACCOUNT_MAX_FAILURES must be >= 1' })
  await t.rejects(build(t, { LOGIN_ACCOUNT_FAILURE_WINDOW: 'soon' }), { message: /^Invalid configuration: LOGIN_ACCOUNT_FAILURE_WINDOW must match pattern/ })
  const app = await build(t)
  t.equal(app.config.ipv6SubnetPrefix, 64)
  t.equal(app.config.loginAccountMaxFailures, 50)
  t.equal(app.config.loginAccountFailureWindow, 3600)
})
