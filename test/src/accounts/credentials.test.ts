// Proves src/accounts/credentials.ts: the last-credential rule, counted on a real store.
import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { Credentials, type CredentialKinds } from '../../../src/accounts/credentials.js'
import { connect, type Store } from '../../../src/db/store.js'
import type { User } from '../../../src/db/users.js'
import { LastCredential } from '../../../src/errors.js'
import { prepareDatabase, testConfig } from '../../helper.js'

const NOW = '2026-01-02T03:04:05.000Z'
const SELF = { actorId: undefined, admin: false }
const ADMIN = { actorId: undefined, admin: true }

async function openStore (t: Test): Promise<Store> {
  const config = testConfig(t)
  await prepareDatabase(t, config)
  const store = await connect(config.databaseUrl)
  t.teardown(() => store.close())
  await store.migrate()
  return store
}

/** A user with exactly these credentials, written through the repositories. */
async function userWith (store: Store, had: { password: boolean, passkeys?: number, identities?: string[] }): Promise<{ user: User, passkeys: string[], identities: string[] }> {
  const user = await store.users.create({ id: randomUUID(), email: `${randomUUID()}@example.com`, name: 'C', age: null, passwordHash: had.password ? '$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHQ$aGFzaA' : '', roles: ['user'], isSuperuser: false }, NOW)
  if (user === undefined) throw new Error('created')
  const passkeys = Array.from({ length: had.passkeys ?? 0 }, () => randomUUID())
  for (const id of passkeys) {
    await store.passkeys.insert({ id, userId: user.id, name: 'Passkey', publicKey: 'AA', signCount: 0, backupEligible: false, backedUp: false, transports: [], aaguid: '00000000-0000-0000-0000-000000000000', createdAt: NOW, lastUsedAt: null })
  }
  const identities: string[] = []
  for (const provider of had.identities ?? []) {
    const id = randomUUID()
    await store.identities.insert({ id, userId: user.id, provider, subject: randomUUID(), email: null, createdAt: NOW, lastLoginAt: null })
    identities.push(id)
  }
  return { user, passkeys, identities }
}

const BOTH_ON: CredentialKinds = { passkeys: true, providers: ['corp', 'github'] }

t.test('a password, passkeys and identities each count; the one removed does not', async (t) => {
  const store = await openStore(t)
  const rule = new Credentials(BOTH_ON)
  const all = await userWith(store, { password: true, passkeys: 2, identities: ['corp', 'github'] })
  t.equal(await rule.remaining(store, all.user, { passkey: all.passkeys[0] ?? '' }), 4)
  t.equal(await rule.remaining(store, all.user, { identity: all.identities[1] ?? '' }), 4)
  const passwordOnly = await userWith(store, { password: true, identities: ['corp'] })
  t.equal(await rule.remaining(store, passwordOnly.user, { identity: passwordOnly.identities[0] ?? '' }), 1, 'the password remains')
})

t.test('the user themself may not remove their last credential (409 last_credential); an admin may', async (t) => {
  const store = await openStore(t)
  const rule = new Credentials(BOTH_ON)
  const lastPasskey = await userWith(store, { password: false, passkeys: 1 })
  await t.rejects(rule.keepLast(store, lastPasskey.user, { passkey: lastPasskey.passkeys[0] ?? '' }, SELF), LastCredential)
  await t.resolves(rule.keepLast(store, lastPasskey.user, { passkey: lastPasskey.passkeys[0] ?? '' }, ADMIN), 'an admin')
  const lastIdentity = await userWith(store, { password: false, identities: ['github'] })
  await t.rejects(rule.keepLast(store, lastIdentity.user, { identity: lastIdentity.identities[0] ?? '' }, SELF), LastCredential)
  const either = await userWith(store, { password: false, passkeys: 1, identities: ['corp'] })
  await t.resolves(rule.keepLast(store, either.user, { passkey: either.passkeys[0] ?? '' }, SELF), 'one passkey, one identity: the passkey may go')
  await t.resolves(rule.keepLast(store, either.user, { identity: either.identities[0] ?? '' }, SELF), '... or the identity')
  const withPassword = await userWith(store, { password: true, identities: ['corp'] })
  await t.resolves(rule.keepLast(store, withPassword.user, { identity: withPassword.identities[0] ?? '' }, SELF), 'negative control: with a password, the last identity goes')
})

t.test('what cannot sign in does not count: passkeys while they are off, identities of a provider no longer configured', async (t) => {
  const store = await openStore(t)
  const passkeysOff = new Credentials({ passkeys: false, providers: ['corp'] })
  const user = await userWith(store, { password: false, passkeys: 3, identities: ['corp'] })
  await t.rejects(passkeysOff.keepLast(store, user.user, { identity: user.identities[0] ?? '' }, SELF), LastCredential, 'three passkeys, but ENABLE_PASSKEYS is off')
  await t.resolves(new Credentials(BOTH_ON).keepLast(store, user.user, { identity: user.identities[0] ?? '' }, SELF), 'negative control: with passkeys on, they count')

  const gone = await userWith(store, { password: false, identities: ['corp', 'retired'] })
  const [corp, retired] = gone.identities as [string, string]
  await t.rejects(passkeysOff.keepLast(store, gone.user, { identity: corp }, SELF), LastCredential, 'the other identity\'s provider is no longer in the file')
  t.equal(await passkeysOff.remaining(store, gone.user, { identity: retired }), 1, 'removing the retired one leaves the working one')
  await t.resolves(new Credentials({ passkeys: false, providers: ['corp', 'retired'] }).keepLast(store, gone.user, { identity: corp }, SELF), 'negative control: configured, it counts')
})
