import { test } from 'tap'
import { base32 } from './base32.js'
import { codeAt, matchingStep, timeStep } from '../../../src/two-factor/totp.js'

/*
 * RFC 6238 Appendix B, the SHA-1 column: the seed is the ASCII string "12345678901234567890". The
 * vectors have 8 digits; a 6-digit code is the same value modulo 10^6, so its last six digits.
 */
const SEED = base32(Buffer.from('12345678901234567890', 'ascii'))
const VECTORS: [number, string][] = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130']
]

test('the verifier accepts each RFC 6238 Appendix B vector at its time (injected clock)', async (t) => {
  for (const [seconds, eight] of VECTORS) {
    const code = eight.slice(-6)
    const at = seconds * 1000
    t.equal(matchingStep(SEED, code, at), timeStep(at), `T=${seconds}: ${code}`)
    t.equal(codeAt(SEED, at), code, `T=${seconds}: the library computes the same code`)
  }
})

test('a vector is accepted one step either side and refused two steps away', async (t) => {
  const at = 1111111109 * 1000
  const code = '081804'
  t.equal(matchingStep(SEED, code, at + 30_000), timeStep(at), 'the next step still takes the previous code')
  t.equal(matchingStep(SEED, code, at - 30_000), timeStep(at), 'the previous step takes the next code')
  t.equal(matchingStep(SEED, code, at + 60_000), undefined, 'two steps later: refused')
  t.equal(matchingStep(SEED, code, at - 60_000), undefined, 'two steps earlier: refused')
  t.equal(matchingStep(SEED, '081805', at), undefined, 'one digit off: refused')
  t.equal(matchingStep(SEED, '81804', at), undefined, 'five digits: refused')
  t.equal(matchingStep(SEED, '0818040', at), undefined, 'seven digits: refused')
})
