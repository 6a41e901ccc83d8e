import { randomBytes, randomUUID } from 'node:crypto'
import { generateAuthenticationOptions, generateRegistrationOptions, verifyAuthenticationResponse, verifyRegistrationResponse, type WebAuthnCredential } from '@simplewebauthn/server'
import Fastify from 'fastify'
import { openFloorDb } from './floor-db.js'

/**
 * The ceiling of the passkey sign-in scenario (bench/passkeys.ts): the same verification by
 * @simplewebauthn/server alone in a bare Fastify route — challenges and the one credential in
 * memory, no database, no session, no token. Listens on 127.0.0.1:$PORT, stops on SIGTERM.
 *
 * With CEILING_DB=<file>, the floor instead: the same route plus only the storage SPEC §14 requires
 * of any sign-in, on gatehouse's own schema (its migrations) with gatehouse's pragmas, through
 * statements prepared once (no query builder): the challenge spent by one conditional update (its
 * own commit: it must hold before the response is looked at), the credential read with its user's
 * handle, then in one transaction the sign count compared and set and the session row inserted for
 * the user's current credentials version. No hashing of the challenge, no token, no audit, no
 * session bound, no rate limit: less than any sign-in keeping those rules can do.
 */
const RP_ID = process.env.RP_ID ?? 'auth.bench.example'
const ORIGIN = `https://${RP_ID}`

interface CeilingStore {
  issue: (challenge: string) => string
  /** the challenge issued under `id`, once */
  spend: (id: string) => string | undefined
  credential: (id: string) => WebAuthnCredential | undefined
  register: (credential: WebAuthnCredential) => void
  /** after a verified assertion: false when another use moved the sign count first */
  signedIn: (credential: WebAuthnCredential, counter: number) => boolean
}

function memoryStore (): CeilingStore {
  const challenges = new Map<string, string>()
  const credentials = new Map<string, WebAuthnCredential>()
  return {
    issue (challenge) {
      const id = randomUUID()
      challenges.set(id, challenge)
      return id
    },
    spend (id) {
      const challenge = challenges.get(id)
      challenges.delete(id)
      return challenge
    },
    credential: (id) => credentials.get(id),
    register (credential) { credentials.set(credential.id, credential) },
    signedIn: () => true
  }
}

async function sqliteStore (file: string): Promise<CeilingStore> {
  const { db, userId } = await openFloorDb(file)
  const now = () => new Date().toISOString()
  const later = (s: number) => new Date(Date.now() + s * 1000).toISOString()
  db.prepare('insert into webauthn_user_handles (user_id, handle) values (?, ?)').run(userId, randomBytes(32).toString('base64url'))
  const insertChallenge = db.prepare('insert into webauthn_challenges (id, challenge_hash, purpose, user_id, created_at, expires_at, spent_at) values (?, ?, \'login\', null, ?, ?, null)')
  const spend = db.prepare<[string, string, string], { challenge_hash: string }>('update webauthn_challenges set spent_at = ? where id = ? and purpose = \'login\' and spent_at is null and expires_at > ? returning challenge_hash')
  const find = db.prepare<[string], { id: string, public_key: string, sign_count: number, handle: string }>('select passkeys.*, webauthn_user_handles.handle from passkeys inner join webauthn_user_handles on webauthn_user_handles.user_id = passkeys.user_id where passkeys.id = ?')
  const insertPasskey = db.prepare('insert into passkeys (id, user_id, name, public_key, sign_count, backup_eligible, backed_up, transports, aaguid, created_at, last_used_at) values (?, ?, \'Passkey\', ?, ?, 0, 0, \'[]\', \'\', ?, null)')
  const recordUse = db.prepare('update passkeys set sign_count = ?, backed_up = 0, last_used_at = ? where id = ? and sign_count = ?')
  const insertSession = db.prepare('insert into sessions (id, user_id, refresh_jti, refresh_claims, created_at, signed_in_at, expires_at, access_expires_at, ip, user_agent, last_used_at, client_id, parent_session_id) ' +
    'select ?, users.id, ?, ?, ?, ?, ?, ?, ?, ?, ?, null, null from users where users.id = ? and users.credentials_version = ?')
  return {
    issue (challenge) {
      const id = randomUUID()
      insertChallenge.run(id, challenge, now(), later(300))
      return id
    },
    spend: (id) => spend.get(now(), id, now())?.challenge_hash,
    credential (id) {
      const row = find.get(id)
      return row && { id: row.id, publicKey: Buffer.from(row.public_key, 'base64url'), counter: Number(row.sign_count) }
    },
    register (credential) { insertPasskey.run(credential.id, userId, Buffer.from(credential.publicKey).toString('base64url'), credential.counter, now()) },
    // the sign count and the session in one transaction: one commit after the signature, the fewest there can be
    signedIn: db.transaction((credential: WebAuthnCredential, counter: number): boolean => {
      if (recordUse.run(counter, now(), credential.id, credential.counter).changes === 0) return false
      const sessionId = randomUUID()
      const jti = randomUUID()
      // the size of gatehouse's refresh claims
      const claims = JSON.stringify({ sub: userId, user_id: userId, session_id: sessionId, jti, typ: 'refresh', amr: ['pop'], acr: 'aal1', auth_time: Date.now(), iat: Date.now(), exp: Date.now() + 2592000 })
      insertSession.run(sessionId, jti, claims, now(), now(), later(2592000), later(900), '127.0.0.1', 'autocannon', now(), userId, 0)
      return true
    })
  }
}

const store = process.env.CEILING_DB === undefined ? memoryStore() : await sqliteStore(process.env.CEILING_DB)
const app = Fastify({ logger: false })

async function challengeFor (): Promise<{ id: string, challenge: Uint8Array<ArrayBuffer> }> {
  const challenge = new Uint8Array(randomBytes(32))
  return { id: store.issue(Buffer.from(challenge).toString('base64url')), challenge }
}

function spend (id: string): string {
  const challenge = store.spend(id)
  if (challenge === undefined) throw new Error('unknown challenge')
  return challenge
}

app.get('/', async () => ({ ok: true }))

app.post('/register/options', async () => {
  const { id, challenge } = await challengeFor()
  const options = await generateRegistrationOptions({ rpName: 'bench', rpID: RP_ID, userName: 'bench', userID: new Uint8Array(randomBytes(32)), challenge, attestationType: 'none' })
  return { challenge_id: id, options }
})

app.post<{ Body: { challenge_id: string, credential: never } }>('/register/verify', async (request) => {
  const expectedChallenge = spend(request.body.challenge_id)
  const result = await verifyRegistrationResponse({ response: request.body.credential, expectedChallenge, expectedOrigin: ORIGIN, expectedRPID: RP_ID })
  if (!result.verified) throw new Error('not verified')
  store.register(result.registrationInfo.credential)
  return { ok: true }
})

app.post('/login/options', async () => {
  const { id, challenge } = await challengeFor()
  return { challenge_id: id, options: await generateAuthenticationOptions({ rpID: RP_ID, allowCredentials: [], challenge, userVerification: 'required' }) }
})

app.post<{ Body: { challenge_id: string, credential: { id: string } } }>('/login/verify', async (request, reply) => {
  const expectedChallenge = spend(request.body.challenge_id)
  const credential = store.credential(request.body.credential.id)
  if (credential === undefined) return await reply.code(400).send({ ok: false })
  const result = await verifyAuthenticationResponse({ response: request.body.credential as never, expectedChallenge, expectedOrigin: ORIGIN, expectedRPID: RP_ID, credential })
  if (!result.verified || !store.signedIn(credential, result.authenticationInfo.newCounter)) return await reply.code(400).send({ ok: false })
  return { ok: true }
})

process.once('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) })
