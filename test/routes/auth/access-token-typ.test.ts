// Proves src/tokens/codec.ts.
import { createSigner } from 'fast-jwt'
import { errors as joseErrors, jwtVerify } from 'jose'
import t from 'tap'
import { authHeader, build, createUser, login, TEST_SECRET } from '../../helper.js'

const key = new TextEncoder().encode(TEST_SECRET)
/** What another service pins when it verifies gatehouse access tokens with the shared secret. */
const pinned = { algorithms: ['HS256'], issuer: 'gatehouse', typ: 'at+jwt' }

t.test('a verifier pinning typ at+jwt accepts the access token and refuses the refresh token', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const tokens = await login(app, user)

  const { payload, protectedHeader } = await jwtVerify(tokens.access_token, key, pinned)
  t.same(protectedHeader, { alg: 'HS256', typ: 'at+jwt' })
  t.equal(payload.type, 'access')
  t.equal(payload.sub, user.id)

  await t.rejects(jwtVerify(tokens.refresh_token, key, pinned), joseErrors.JWTClaimValidationFailed, 'the refresh token has no at+jwt typ')
  // negative control: without the typ pin the same verifier takes the refresh token, which is why the header matters
  const { payload: refresh } = await jwtVerify(tokens.refresh_token, key, { algorithms: ['HS256'], issuer: 'gatehouse' })
  t.equal(refresh.type, 'refresh')
})

t.test('gatehouse still accepts an access token signed without the typ header', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const tokens = await login(app, user)
  const claims = app.services.tokens.verify(tokens.access_token, 'access', Date.now())
  // the same claims under the header gatehouse signed before (typ JWT, fast-jwt's default)
  const legacy = createSigner({ key: TEST_SECRET, algorithm: 'HS256' })({ ...claims, jti: `${claims.jti}-legacy` })
  t.same(JSON.parse(Buffer.from(legacy.split('.')[0] ?? '', 'base64url').toString()), { alg: 'HS256', typ: 'JWT' })
  const res = await app.inject({ method: 'GET', url: '/auth/me', headers: authHeader(legacy) })
  t.equal(res.statusCode, 200)
  t.equal(res.json().id, user.id)
})
