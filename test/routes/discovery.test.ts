import t from 'tap'
import { build } from '../helper.js'
import { OIDC } from './api/oidc-support.js'

/* The discovery documents (routes/discovery.ts, src/oidc/discovery.ts): SPEC §15's table, field for field. */

const ISSUER = 'http://localhost:3000'

function expected (issuer: string, alg: string): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth2/authorize`,
    token_endpoint: `${issuer}/oauth2/token`,
    userinfo_endpoint: `${issuer}/oauth2/userinfo`,
    revocation_endpoint: `${issuer}/oauth2/revoke`,
    introspection_endpoint: `${issuer}/oauth2/introspect`,
    end_session_endpoint: `${issuer}/oauth2/end-session`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [alg],
    scopes_supported: ['openid', 'profile', 'email', 'roles', 'offline_access'],
    claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'acr', 'amr', 'azp', 'sid', 'email', 'email_verified', 'name', 'roles'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    code_challenge_methods_supported: ['S256'],
    prompt_values_supported: ['none', 'login', 'consent'],
    authorization_response_iss_parameter_supported: true
  }
}

t.test('both well-known paths answer the same document, public and cached for JWKS_MAX_AGE', async (t) => {
  const app = await build(t, { ...OIDC, JWKS_MAX_AGE: '7m' })
  for (const url of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 200, url)
    t.equal(res.headers['cache-control'], 'public, max-age=420', url)
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8', url)
    t.strictSame(res.json(), expected(ISSUER, 'ES256'), url)
    t.equal((await app.inject({ method: 'HEAD', url })).statusCode, 200, `HEAD ${url}`)
  }
  // the jwks_uri it names is the real key set, and the issuer is the one relying parties compare
  const jwks = await app.inject({ method: 'GET', url: '/.well-known/jwks.json' })
  t.equal((jwks.json() as { keys: Array<{ alg: string }> }).keys[0]?.alg, 'ES256')
})

t.test('the issuer is PUBLIC_URL exactly, with its path; the algorithm is JWT_ALG', async (t) => {
  const app = await build(t, { ...OIDC, PUBLIC_URL: 'https://example.com/auth', JWT_ALG: 'EdDSA' })
  const res = await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })
  t.strictSame(res.json(), expected('https://example.com/auth', 'EdDSA'))
})

t.test('/openapi.json lists the clients and grants routes, never discovery; off, none of them', async (t) => {
  const on = await build(t, OIDC)
  const paths = Object.keys((await on.inject({ method: 'GET', url: '/openapi.json' })).json().paths as object)
  // the grants with the caller's other /api/auth routes (the scope that refuses API keys), then the clients
  t.strictSame(paths.filter((p) => p.includes('oauth2') || p.includes('grants') || p.includes('well-known/o')), [
    '/api/auth/grants',
    '/api/auth/grants/{client_id}',
    '/api/oauth2/clients',
    '/api/oauth2/clients/{client_id}',
    '/api/oauth2/clients/{client_id}/rotate-secret'
  ])
  const off = await build(t)
  const offPaths = Object.keys((await off.inject({ method: 'GET', url: '/openapi.json' })).json().paths as object)
  t.strictSame(offPaths.filter((p) => p.includes('oauth2') || p.includes('grants')), [])
})
