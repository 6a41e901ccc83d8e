import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import { authHeader, build, createUser, login } from '../../../helper.js'

export const METRICS = { METRICS_ENABLED: true, METRICS_TOKEN: 'scrape-token-0123456789abcdef' }

export interface Importer { app: FastifyInstance, rootId: string, token: string }

/** An app with a superuser signed in (the one caller the import takes). */
export async function importer (t: Test, values: Record<string, unknown> = {}): Promise<Importer> {
  const app = await build(t, { ...METRICS, ...values })
  const root = await createUser(app, { email: 'root@example.com', roles: [], isSuperuser: true })
  return { app, rootId: root.id, token: (await login(app, root)).access_token }
}

export async function postImport ({ app, token }: Importer, payload: unknown): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url: '/api/users/import', headers: authHeader(token), payload: payload as Record<string, unknown> })
}

export async function signIn (app: FastifyInstance, email: string, password: string): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url: '/auth/login', payload: { email, password } })
}

/** `gatehouse_users_by_password_hash` as {algorithm: count}, scraped from /metrics. */
export async function census (app: FastifyInstance): Promise<Record<string, number>> {
  const res = await app.inject({ method: 'GET', url: '/metrics', headers: authHeader(METRICS.METRICS_TOKEN) })
  const counts: Record<string, number> = {}
  for (const m of res.body.matchAll(/^gatehouse_users_by_password_hash\{algorithm="([a-z0-9_]+)"\} (\d+)$/gm)) counts[m[1] ?? ''] = Number(m[2])
  return counts
}

export async function storedHash (app: FastifyInstance, email: string): Promise<string | undefined> {
  return (await app.store.users.findByEmail(email))?.passwordHash
}

export const VALIDATION_FAILED = { error: 'Validation failed', message: 'The given data was invalid', code: 'validation_failed' }
