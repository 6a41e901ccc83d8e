import { Type, type Static, type TObject } from '@sinclair/typebox'
import { durationSetting, parseDuration, parseRate, rateSetting } from './units.js'

/** The limits on guessing (failure counts, their windows, request rates), spread into the one ConfigSchema (src/config/config.ts). */
export const LimitSettings = {
  LOGIN_MAX_FAILURES: Type.Integer({
    default: 5,
    minimum: 1,
    description: 'failed sign-ins for one email from one address within `LOGIN_FAILURE_WINDOW` after which ' +
      'that pair gets 429 (even with the right password) until the window passes; a success resets the count'
  }),
  LOGIN_FAILURE_WINDOW: durationSetting('the window of `LOGIN_MAX_FAILURES`', '15m'),
  LOGIN_ACCOUNT_MAX_FAILURES: Type.Integer({
    default: 50,
    minimum: 1,
    description: 'failed sign-ins for one account within `LOGIN_ACCOUNT_FAILURE_WINDOW`, whatever the address, after which ' +
      'every address the account has not signed in from in the last 30 days gets 429 until the window passes'
  }),
  LOGIN_ACCOUNT_FAILURE_WINDOW: durationSetting('the window of `LOGIN_ACCOUNT_MAX_FAILURES`', '1h'),
  IPV6_SUBNET_PREFIX: Type.Integer({
    default: 64,
    minimum: 1,
    maximum: 128,
    description: 'per-address limits (`LOGIN_MAX_FAILURES`, `LOGIN_RATE_LIMIT`, `REFRESH_RATE_LIMIT`) count an IPv6 client ' +
      'by this many leading bits of its address, since one subscriber usually holds a whole /64'
  }),
  LOGIN_RATE_LIMIT: rateSetting('sign-in attempts per client address whatever the email; register and change-password count against it too', '60/m'),
  REFRESH_RATE_LIMIT: rateSetting('refresh attempts per client address', '120/m')
}

export interface LimitConfig {
  loginMaxFailures: number
  /** seconds */
  loginFailureWindow: number
  loginAccountMaxFailures: number
  /** seconds */
  loginAccountFailureWindow: number
  ipv6SubnetPrefix: number
  loginRateLimit: { max: number, windowSeconds: number }
  refreshRateLimit: { max: number, windowSeconds: number }
}

export function limitConfig (raw: Static<TObject<typeof LimitSettings>>): LimitConfig {
  return {
    loginMaxFailures: raw.LOGIN_MAX_FAILURES,
    loginFailureWindow: parseDuration(raw.LOGIN_FAILURE_WINDOW),
    loginAccountMaxFailures: raw.LOGIN_ACCOUNT_MAX_FAILURES,
    loginAccountFailureWindow: parseDuration(raw.LOGIN_ACCOUNT_FAILURE_WINDOW),
    ipv6SubnetPrefix: raw.IPV6_SUBNET_PREFIX,
    loginRateLimit: parseRate(raw.LOGIN_RATE_LIMIT),
    refreshRateLimit: parseRate(raw.REFRESH_RATE_LIMIT)
  }
}
