import { randomUUID } from 'node:crypto'
import { generatePair, pemOf } from '../src/keys/key-pairs.js'
import { KeyRing } from '../src/keys/key-ring.js'
import { ACCESS_TOKEN_TYP, createTokenCodec, REQUIRED_CLAIMS, type TokenCodec } from '../src/tokens/codec.js'

/*
 * The cold (uncached) cost of verifying one access token per JWT_ALG: what a protected request
 * pays the first time a token is presented (the verified-token cache answers the later ones).
 * `npm run build:bench && node dist/bench/verify-cost.js [iterations]`; reported in docs/benchmarks.md.
 */

const SECRET = 'bench-secret-that-is-at-least-32-bytes-long'
const ISSUER = 'gatehouse'
const iterations = Number(process.argv[2] ?? 20_000)

async function codecFor (alg: 'HS256' | 'ES256' | 'EdDSA' | 'RS256'): Promise<TokenCodec> {
  if (alg === 'HS256') return createTokenCodec(SECRET, ISSUER)
  const ring = new KeyRing(alg, { issuer: ISSUER, audience: undefined, requiredClaims: REQUIRED_CLAIMS, typ: ACCESS_TOKEN_TYP })
  const pair = await generatePair(alg)
  const now = new Date().toISOString()
  ring.set([{ kid: pair.kid, seq: 1, activatesAt: now, retiresAt: null, jwk: pair.publicJwk, ...pemOf(pair.publicJwk, pair.privateDer) }])
  return createTokenCodec(SECRET, ISSUER, { ring })
}

function claims (): Record<string, unknown> & { type: string } {
  const id = randomUUID()
  const iat = Math.floor(Date.now() / 1000)
  return { user_id: id, email: 'bench@example.com', roles: ['user'], session_id: randomUUID(), is_superuser: false, type: 'access', sub: id, iat, exp: iat + 900, iss: ISSUER, jti: randomUUID() }
}

for (const alg of ['HS256', 'ES256', 'EdDSA', 'RS256'] as const) {
  const codec = await codecFor(alg)
  const token = codec.sign(claims())
  for (let i = 0; i < 500; i++) codec.verify(token, 'access', Date.now())
  const start = process.hrtime.bigint()
  for (let i = 0; i < iterations; i++) codec.verify(token, 'access', Date.now())
  const micros = Number(process.hrtime.bigint() - start) / 1000 / iterations
  const signStart = process.hrtime.bigint()
  for (let i = 0; i < 500; i++) codec.sign(claims())
  const signMicros = Number(process.hrtime.bigint() - signStart) / 1000 / 500
  process.stdout.write(`${alg.padEnd(6)} verify ${micros.toFixed(1).padStart(7)} µs  (${Math.round(1e6 / micros)}/s)   sign ${signMicros.toFixed(1).padStart(7)} µs\n`)
}
