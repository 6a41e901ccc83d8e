/*
 * RFC 6749 §5.2's error body `{error, error_description}`: the one deliberate exception to §5's
 * ErrorResponse, answered by /oauth2/token, /oauth2/revoke and /oauth2/introspect alone (one
 * error handler of the /oauth2 scope shapes it). Everything else throws the catalogue's errors.
 */

export type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' |
  'unsupported_grant_type' | 'invalid_scope' | 'server_error'

export interface OAuthErrorOptions {
  /** default: 401 for invalid_client, 500 for server_error, else 400 */
  status?: number
  /** the client authenticated with HTTP Basic: a 401 carries `WWW-Authenticate: Basic` (RFC 6749 §5.2) */
  basic?: boolean
}

export class OAuthError extends Error {
  readonly status: number
  readonly basic: boolean

  constructor (readonly error: OAuthErrorCode, readonly description: string, options: OAuthErrorOptions = {}) {
    super(description)
    this.status = options.status ?? (error === 'invalid_client' ? 401 : error === 'server_error' ? 500 : 400)
    this.basic = options.basic ?? false
  }

  /** The body RFC 6749 §5.2 defines. */
  body (): { error: OAuthErrorCode, error_description: string } {
    return { error: this.error, error_description: this.description }
  }
}
