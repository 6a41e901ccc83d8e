import { execFileSync } from 'node:child_process'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { authHeader, build, createUser, login, type CreatedUser, type TestContext } from '../../../helper.js'

/*
 * What the TOTP suites share. Codes come from Debian's oathtool, an authenticator we did not
 * write, computed from the secret the API returned; the apps run on a clock the test sets, so a
 * code is computed for an exact moment and the window is tested without waiting.
 */

export const DATA_KEY = `t1:${Buffer.alloc(32, 9).toString('base64')}`
export const TOTP_ON = { ENABLE_TOTP: true, DATA_ENCRYPTION_KEYS: DATA_KEY }
export const INVALID_OTP = { error: 'Bad Request', message: 'The code is invalid or has expired', code: 'invalid_otp' }

/** A settable clock, in the middle of a time step so ±30 s stays within one step either side. */
export function testClock (): { now: number, clock: () => number } {
  const state = { now: (Math.floor(Date.now() / 30_000) * 30 + 15) * 1000, clock: () => state.now }
  return state
}

/** Debian's oathtool: the code of `secret` (base32) at `atMs`. Throws (fails the test) when oathtool is missing. */
export function oathtool (secret: string, atMs: number): string {
  return execFileSync('oathtool', ['--totp', '-b', secret, '--now', `@${Math.floor(atMs / 1000)}`], { encoding: 'utf8' }).trim()
}

export async function totpApp (t: TestContext, values: Record<string, unknown> = {}, clock = testClock()): Promise<FastifyInstance & { testClock: ReturnType<typeof testClock> }> {
  const app = await build(t, { ...TOTP_ON, ...values }, { clock: clock.clock })
  return Object.assign(app, { testClock: clock })
}

export async function post (app: FastifyInstance, url: string, payload: Record<string, unknown>, token?: string): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url, payload, headers: token === undefined ? {} : authHeader(token) })
}

export interface Enrolled extends CreatedUser {
  secret: string
  recoveryCodes: string[]
  access_token: string
  refresh_token: string
}

/** A user with TOTP on: signed in, enrolled and confirmed with oathtool's code of the app's current step. */
export async function enrolledUser (app: FastifyInstance & { testClock: ReturnType<typeof testClock> }, options: Parameters<typeof createUser>[1] = {}): Promise<Enrolled> {
  const user = await createUser(app, options)
  const { access_token: access } = await login(app, user)
  const enrolled = await post(app, '/auth/enable-2fa', { password: user.password }, access)
  if (enrolled.statusCode !== 200) throw new Error(`enable-2fa: ${enrolled.statusCode} ${enrolled.body}`)
  const { secret } = enrolled.json() as { secret: string }
  const verified = await post(app, '/auth/verify-2fa', { code: oathtool(secret, app.testClock.now) }, access)
  if (verified.statusCode !== 200) throw new Error(`verify-2fa: ${verified.statusCode} ${verified.body}`)
  const body = verified.json() as { recovery_codes: string[], access_token: string, refresh_token: string }
  // the next code must come from a later step: the enrolment's is spent
  app.testClock.now += 30_000
  return { ...user, secret, recoveryCodes: body.recovery_codes, access_token: body.access_token, refresh_token: body.refresh_token }
}

/** A password sign-in of a TOTP user: the challenge's mfa_token. */
export async function challengeOf (app: FastifyInstance, user: { email: string, password: string }, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await post(app, '/auth/login', { email: user.email, password: user.password, ...extra })
  if (res.statusCode !== 403) throw new Error(`login: ${res.statusCode} ${res.body}`)
  return (res.json() as { mfa_token: string }).mfa_token
}
