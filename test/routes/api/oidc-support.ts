import { randomBytes } from 'node:crypto'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import { authHeader, build, createUser, login } from '../../helper.js'

/* What the OpenID Connect provider's route suites share: the settings that switch it on, and a superuser. */

export const DATA_KEY = `k1:${randomBytes(32).toString('base64')}`

export const OIDC = {
  ENABLE_OIDC_PROVIDER: true,
  ENABLE_PORTAL: true,
  PUBLIC_URL: 'http://localhost:3000',
  JWT_ALG: 'ES256',
  DATA_ENCRYPTION_KEYS: DATA_KEY
}

export interface OidcApp { app: FastifyInstance, admin: { authorization: string }, adminId: string }

export async function oidcApp (t: Test, values: Record<string, unknown> = {}): Promise<OidcApp> {
  const app = await build(t, { ...OIDC, ...values })
  const user = await createUser(app, { isSuperuser: true, roles: ['admin'] })
  const { access_token: token } = await login(app, user)
  return { app, admin: authHeader(token), adminId: user.id }
}

export async function createClient (env: OidcApp, payload: Record<string, unknown>): Promise<LightMyRequestResponse> {
  return await env.app.inject({ method: 'POST', url: '/api/oauth2/clients', headers: env.admin, payload })
}

/** The audit rows of an event, newest first, as GET /api/audit lists them (the trail flushed first). */
export async function auditRows (env: OidcApp, event: string): Promise<Array<Record<string, unknown>>> {
  await env.app.auditTrail.flush()
  const res = await env.app.inject({ method: 'GET', url: `/api/audit?event=${event}&per_page=100`, headers: env.admin })
  return (res.json() as { data: Array<Record<string, unknown>> }).data
}
