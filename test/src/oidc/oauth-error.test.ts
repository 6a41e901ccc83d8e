import t from 'tap'
import { OAuthError } from '../../../src/oidc/oauth-error.js'

/* RFC 6749 §5.2's error (src/oidc/oauth-error.ts): its status, body and WWW-Authenticate. */

t.test('statuses by error, the body with exactly error and error_description', async (t) => {
  t.equal(new OAuthError('invalid_client', 'x').status, 401)
  t.equal(new OAuthError('server_error', 'x').status, 500)
  for (const error of ['invalid_request', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope'] as const) {
    t.equal(new OAuthError(error, 'x').status, 400, error)
  }
  t.equal(new OAuthError('invalid_request', 'x', { status: 429 }).status, 429, 'a given status wins')
  t.strictSame(new OAuthError('invalid_grant', 'The code is spent').body(), { error: 'invalid_grant', error_description: 'The code is spent' })
})

t.test('WWW-Authenticate: Basic only on a 401 to a client that used Basic', async (t) => {
  t.strictSame(new OAuthError('invalid_client', 'x', { basic: true }).headers(), { 'www-authenticate': 'Basic realm="gatehouse", charset="UTF-8"' })
  t.strictSame(new OAuthError('invalid_client', 'x').headers(), {}, 'client_secret_post: none')
  t.strictSame(new OAuthError('invalid_request', 'x', { basic: true }).headers(), {}, 'a 400: none')
})
