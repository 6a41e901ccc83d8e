import bcrypt from 'bcrypt'
import { ADMIN, BenchError, type Child } from './servers.js'

/** The user the scenarios act as: a plain user reading themself, so the guard's self rule runs. */
export const USER = { email: 'bench-user@example.com', password: 'Bench-User-Password-1!', name: 'Bench User' }

export interface Session { token: string, id: string }

async function call (child: Child, method: string, path: string, body: unknown, token?: string): Promise<{ status: number, body: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (token !== undefined) headers.authorization = `Bearer ${token}`
  const res = await fetch(child.url + path, { method, headers, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) })
  return { status: res.status, body: await res.json() as Record<string, unknown> }
}

/** Signs in over HTTP: the access token and the user's id. */
export async function signIn (child: Child, credentials: { email: string, password: string }): Promise<Session> {
  const res = await call(child, 'POST', '/auth/login', { email: credentials.email, password: credentials.password })
  const token = res.body.access_token
  const id = (res.body.user as { id?: unknown } | undefined)?.id
  if (res.status !== 200 || typeof token !== 'string' || typeof id !== 'string') {
    throw new BenchError(`${child.name}: login for the benchmark failed: ${res.status} ${JSON.stringify(res.body)}`)
  }
  return { token, id }
}

/** An API key of the signed-in user (ENABLE_API_KEYS, docs/api-keys.md): `token` is a fresh sign-in, recent enough. */
export async function createApiKey (child: Child, token: string): Promise<string> {
  const res = await call(child, 'POST', '/api/auth/api-keys', { name: 'bench' }, token)
  if (res.status !== 201 || typeof res.body.key !== 'string') throw new BenchError(`${child.name}: creating an API key failed: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body.key
}

/** The seeded admin creates the benchmark's plain user (registration is off in production). */
export async function createUser (child: Child): Promise<void> {
  const admin = await signIn(child, ADMIN)
  const res = await call(child, 'POST', '/api/users', USER, admin.token)
  if (res.status !== 201) throw new BenchError(`${child.name}: creating the benchmark user failed: ${res.status} ${JSON.stringify(res.body)}`)
}

let bcryptHash: Promise<string> | undefined

/**
 * Fresh users holding one bcrypt (cost 10) hash of USER's password, imported by the admin through
 * POST /api/users/import: each signs in once, since that first sign-in rehashes it to argon2id.
 */
export async function importBcryptUsers (child: Child, count: number): Promise<string[]> {
  bcryptHash ??= bcrypt.hash(USER.password, 10)
  const hash = await bcryptHash
  const admin = await signIn(child, ADMIN)
  const prefix = `bcrypt-${Date.now()}`
  const emails: string[] = []
  for (let i = 0; i < count; i += 1000) {
    const users = Array.from({ length: Math.min(1000, count - i) }, (_, j) => ({ email: `${prefix}-${i + j}@example.com`, name: 'Bench Import', password_hash: hash }))
    const res = await call(child, 'POST', '/api/users/import', { users }, admin.token)
    if (res.status !== 200) throw new BenchError(`${child.name}: importing the bcrypt users failed: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`)
    emails.push(...users.map((u) => u.email))
  }
  return emails
}
