import type { User } from './db/users.js'

/**
 * The seam where a second factor (TOTP, not built yet) will join account recovery. Today every
 * account reports `none`, so a reset needs no `code` and an email-code sign-in ends in tokens.
 * Once TOTP exists: a reset of an account with `totp` requires a current code or a recovery code
 * (403 `mfa_required` when missing or wrong, the token surviving up to EMAIL_OTP_MAX_ATTEMPTS such
 * failures), and an email-code sign-in answers the `mfa_required` challenge instead of tokens.
 */
export type SecondFactor = 'none' | 'totp'

export async function secondFactorOf (_user: User): Promise<SecondFactor> {
  return 'none'
}
