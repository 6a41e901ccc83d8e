import { Secret, TOTP } from 'otpauth'
import QRCode from 'qrcode'

/*
 * RFC 6238 as every authenticator app implements it: HMAC-SHA-1, six digits, 30-second steps,
 * a 160-bit secret in base32. The arithmetic is the otpauth library's; gatehouse decides only
 * which steps it accepts (the previous, current and next) and that each is accepted once.
 */

const PERIOD = 30
const DIGITS = 6
/** steps either side of the current one still accepted: a clock off by up to 30 s, a code typed as it turned */
const WINDOW = 1
const CODE = /^[0-9]{6}$/

/** A fresh secret: 160 random bits (RFC 4226's recommended length), base32 without padding. */
export function newTotpSecret (): string {
  return new Secret({ size: 20 }).base32
}

function totpOf (secret: string, issuer = '', label = 'account'): TOTP {
  return new TOTP({ issuer, label, algorithm: 'SHA1', digits: DIGITS, period: PERIOD, secret: Secret.fromBase32(secret) })
}

/** The `otpauth://totp/…` URI an authenticator app reads (issuer and account both in label and query). */
export function otpauthUri (secret: string, issuer: string, account: string): string {
  return totpOf(secret, issuer, account).toString()
}

/** The URI as an SVG QR code (error correction M), for the enrolment screen. */
export async function qrSvg (uri: string): Promise<string> {
  return await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 4 })
}

/** The time step a moment falls in. */
export function timeStep (nowMs: number): number {
  return Math.floor(nowMs / 1000 / PERIOD)
}

/**
 * The time step whose code `code` is, among the steps around `nowMs`, or undefined. Whether that
 * step may still be used (it must be newer than the last one accepted) is the store's to decide.
 */
export function matchingStep (secret: string, code: string, nowMs: number): number | undefined {
  if (!CODE.test(code)) return undefined
  const delta = totpOf(secret).validate({ token: code, timestamp: nowMs, window: WINDOW })
  return delta === null ? undefined : timeStep(nowMs) + delta
}

/** The code of a moment (tests and the command line; the service only verifies). */
export function codeAt (secret: string, nowMs: number): string {
  return totpOf(secret).generate({ timestamp: nowMs })
}
