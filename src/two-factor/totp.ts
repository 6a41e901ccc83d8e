import { Secret, TOTP } from 'otpauth'
import QRCode from 'qrcode'

/* RFC 6238 as authenticator apps implement it; gatehouse decides only which steps it accepts. */

const PERIOD = 30
const DIGITS = 6
/** a clock off by up to 30 s, a code typed as it turned */
const WINDOW = 1
const CODE = /^[0-9]{6}$/

export function newTotpSecret (): string {
  return new Secret({ size: 20 }).base32
}

function totpOf (secret: string, issuer = '', label = 'account'): TOTP {
  return new TOTP({ issuer, label, algorithm: 'SHA1', digits: DIGITS, period: PERIOD, secret: Secret.fromBase32(secret) })
}

export function otpauthUri (secret: string, issuer: string, account: string): string {
  return totpOf(secret, issuer, account).toString()
}

export async function qrSvg (uri: string): Promise<string> {
  return await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 })
}

export function timeStep (nowMs: number): number {
  return Math.floor(nowMs / 1000 / PERIOD)
}

/** Whether the step may still be used is the store's to decide. */
export function matchingStep (secret: string, code: string, nowMs: number): number | undefined {
  if (!CODE.test(code)) return undefined
  const delta = totpOf(secret).validate({ token: code, timestamp: nowMs, window: WINDOW })
  return delta === null ? undefined : timeStep(nowMs) + delta
}

export function codeAt (secret: string, nowMs: number): string {
  return totpOf(secret).generate({ timestamp: nowMs })
}
