import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import { authHeader, build, createUser, login, rawSql, type CreatedUser, type TestContext } from '../../helper.js'
import { SoftAuthenticator, type Twist } from '../../webauthn-authenticator.js'

/*
 * What the passkey suites share (routes/auth/passkeys.ts, routes/api/passkeys.ts): an app with
 * passkeys on behind https://auth.example.com, and the ceremonies run by test/webauthn-authenticator.ts.
 */

export const DATA_KEY = `t1:${Buffer.alloc(32, 7).toString('base64')}`
export const ORIGIN = 'https://auth.example.com'
export const PASSKEYS_ON = { ENABLE_PASSKEYS: true, PUBLIC_URL: ORIGIN, DATA_ENCRYPTION_KEYS: DATA_KEY }
export const PASSKEY_INVALID = { error: 'Bad Request', message: 'The passkey could not be verified', code: 'passkey_invalid' }

export async function passkeyApp (t: TestContext, values: Record<string, unknown> = {}, hooks: Parameters<typeof build>[2] = {}): Promise<FastifyInstance> {
  return await build(t, { ...PASSKEYS_ON, ...values }, hooks)
}

export async function post (app: FastifyInstance, url: string, payload: Record<string, unknown>, token?: string): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url, payload, headers: token === undefined ? {} : authHeader(token) })
}

export interface Ceremony { challenge_id: string, options: { challenge: string, rpId?: string, rp: { id: string }, user: { id: string }, [key: string]: unknown } }

export async function ceremony (app: FastifyInstance, url: string, payload: Record<string, unknown>, token?: string): Promise<Ceremony> {
  const res = await post(app, url, payload, token)
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
  return res.json()
}

export interface SignedIn extends CreatedUser { access_token: string, refresh_token: string }

/** A user signed in with the password just now (a recent sign-in). */
export async function signedInUser (app: FastifyInstance, options: Parameters<typeof createUser>[1] = {}): Promise<SignedIn> {
  const user = await createUser(app, options)
  const tokens = await login(app, user)
  return { ...user, access_token: tokens.access_token, refresh_token: tokens.refresh_token }
}

/** register/options then register/verify; the verify answer as it came. */
export async function registerWith (app: FastifyInstance, token: string, authenticator: SoftAuthenticator, twist: Twist = {}, extra: Record<string, unknown> = {}): Promise<LightMyRequestResponse> {
  const { challenge_id: challengeId, options } = await ceremony(app, '/auth/passkeys/register/options', {}, token)
  return await post(app, '/auth/passkeys/register/verify', { challenge_id: challengeId, credential: authenticator.create(options, twist), ...extra }, token)
}

/** A user with one passkey on a fresh authenticator. */
export async function userWithPasskey (app: FastifyInstance, flags: ConstructorParameters<typeof SoftAuthenticator>[1] = {}, options: Parameters<typeof createUser>[1] = {}): Promise<SignedIn & { authenticator: SoftAuthenticator, passkeyId: string }> {
  const user = await signedInUser(app, options)
  const authenticator = new SoftAuthenticator(ORIGIN, flags)
  const res = await registerWith(app, user.access_token, authenticator)
  if (res.statusCode !== 201) throw new Error(`register: ${res.statusCode} ${res.body}`)
  return { ...user, authenticator, passkeyId: (res.json() as { id: string }).id }
}

/** login/options then login/verify with the authenticator's assertion. */
export async function signInWith (app: FastifyInstance, authenticator: SoftAuthenticator, twist: Twist = {}, extra: Record<string, unknown> = {}): Promise<LightMyRequestResponse> {
  const { challenge_id: challengeId, options } = await ceremony(app, '/auth/passkeys/login/options', {})
  return await post(app, '/auth/passkeys/login/verify', { challenge_id: challengeId, credential: authenticator.get(options, twist), ...extra })
}

export interface AuditRow { event: string, outcome: string, user_id: string | null, detail: string | null }

/** The audit trail as rows, oldest first (the pending rows written first). */
export async function auditRows (app: FastifyInstance): Promise<AuditRow[]> {
  await app.auditTrail.flush()
  return await rawSql<AuditRow>(app.config, sql`select event, outcome, user_id, detail from audit_events order by id`)
}

/** A settable wall clock for the app (challenges, recent authentication). */
export function testClock (): { now: number, clock: () => number } {
  const state = { now: Date.now(), clock: () => state.now }
  return state
}
