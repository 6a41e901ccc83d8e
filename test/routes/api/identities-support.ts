import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { StoredIdentity } from '../../../src/db/identities.js'
import type { TestContext } from '../../helper.js'
import { providersFile } from '../../idp/support.js'
import { portalValues } from '../portal/support.js'

/*
 * What the suites of the connected accounts share (routes/api/identities.ts, routes/api/user-identities.ts,
 * the account page): an app with ENABLE_IDP_LOGIN and two providers of type github (no discovery to
 * wait for), and identities written through the real repository, as the sign-in flow writes them.
 */

export const PROVIDERS = [
  { id: 'github', type: 'github', display_name: 'GitHub', client_id: 'Iv1.test' },
  { id: 'ghe', type: 'github', display_name: 'GitHub <Enterprise> & Co', client_id: 'Iv1.ghe', github_url: 'https://ghe.example.com', github_api_url: 'https://ghe.example.com/api/v3' }
]

/** The settings that turn sign-in through providers on, with `providers` in IDP_PROVIDERS_FILE (test/idp/support.ts writes it, each secret in a private file). */
export function idpValues (t: TestContext, values: Record<string, unknown> = {}, providers: Array<Record<string, unknown>> = PROVIDERS): Record<string, unknown> {
  return portalValues({ ENABLE_IDP_LOGIN: true, IDP_PROVIDERS_FILE: providersFile(t, providers), ...values })
}

let subjects = 0

/** An identity of `provider` linked to the user, as the sign-in flow links one (created `createdAt`, never used to sign in unless `lastLoginAt`). */
export async function linkIdentity (app: FastifyInstance, userId: string, provider: string, given: Partial<StoredIdentity> = {}): Promise<StoredIdentity> {
  const identity: StoredIdentity = {
    id: randomUUID(),
    userId,
    provider,
    subject: String(++subjects),
    email: `upstream${subjects}@example.org`,
    createdAt: new Date().toISOString(),
    lastLoginAt: null,
    ...given
  }
  if (!await app.store.identities.insert(identity)) throw new Error('linked already')
  return identity
}

/** What the JSON routes show of a stored identity. */
export function shown (identity: StoredIdentity, displayName: string): Record<string, unknown> {
  return {
    id: identity.id,
    provider: identity.provider,
    display_name: displayName,
    email: identity.email,
    created_at: identity.createdAt,
    last_login_at: identity.lastLoginAt
  }
}

export const IDENTITY_NOT_FOUND = { error: 'Not Found', message: 'Identity not found', code: 'not_found' }
export const LAST_CREDENTIAL = { error: 'Conflict', message: 'This is the last way to sign in to the account', code: 'last_credential' }
