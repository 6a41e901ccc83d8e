import { randomBytes, randomUUID } from 'node:crypto'
import { generateAuthenticationOptions, generateRegistrationOptions, verifyAuthenticationResponse, verifyRegistrationResponse, type WebAuthnCredential } from '@simplewebauthn/server'
import Fastify from 'fastify'

/**
 * The ceiling of the passkey sign-in scenario (bench/passkeys.ts): the same verification by
 * @simplewebauthn/server alone in a bare Fastify route — challenges and the one credential in
 * memory, no database, no session, no token. Listens on 127.0.0.1:$PORT, stops on SIGTERM.
 */
const RP_ID = process.env.RP_ID ?? 'auth.bench.example'
const ORIGIN = `https://${RP_ID}`
const app = Fastify({ logger: false })
const challenges = new Map<string, string>()
const credentials = new Map<string, WebAuthnCredential>()

async function challengeFor (): Promise<{ id: string, challenge: Uint8Array<ArrayBuffer> }> {
  const id = randomUUID()
  const challenge = new Uint8Array(randomBytes(32))
  challenges.set(id, Buffer.from(challenge).toString('base64url'))
  return { id, challenge }
}

function spend (id: string): string {
  const challenge = challenges.get(id)
  if (challenge === undefined) throw new Error('unknown challenge')
  challenges.delete(id)
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
  credentials.set(result.registrationInfo.credential.id, result.registrationInfo.credential)
  return { ok: true }
})

app.post('/login/options', async () => {
  const { id, challenge } = await challengeFor()
  return { challenge_id: id, options: await generateAuthenticationOptions({ rpID: RP_ID, allowCredentials: [], challenge, userVerification: 'required' }) }
})

app.post<{ Body: { challenge_id: string, credential: { id: string } } }>('/login/verify', async (request, reply) => {
  const credential = credentials.get(request.body.credential.id)
  const expectedChallenge = spend(request.body.challenge_id)
  if (credential === undefined) return await reply.code(400).send({ ok: false })
  const result = await verifyAuthenticationResponse({ response: request.body.credential as never, expectedChallenge, expectedOrigin: ORIGIN, expectedRPID: RP_ID, credential })
  return result.verified ? { ok: true } : await reply.code(400).send({ ok: false })
})

process.once('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) })
