import { randomBytes } from 'node:crypto'
import t from 'tap'
import { Envelope, parseDataKeys } from '../../../src/crypto/envelope.js'
import { FlowCookie, type FlowStep } from '../../../src/portal/flow.js'

const keyA = `a:${randomBytes(32).toString('base64')}`
const keyB = `b:${randomBytes(32).toString('base64')}`
const STEP: FlowStep = { step: 'second_factor', mfaToken: 'm'.repeat(43), rd: 'https://auth.example.com/portal/account' }

function flowCookie (keys: string, now = 1_800_000_000_000): FlowCookie & { at: { now: number } } {
  const at = { now }
  return Object.assign(new FlowCookie(new Envelope(parseDataKeys(keys)), () => at.now), { at })
}

t.test('a sealed step opens again with the same keys, and nothing of it is readable', async (t) => {
  const cookie = flowCookie(keyA)
  const sealed = cookie.seal(STEP, 300)
  t.match(sealed, /^a\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
  t.notOk(sealed.includes('mmmm'))
  t.notOk(Buffer.from(sealed.split('.')[2] ?? '', 'base64url').toString('latin1').includes('mmmm'))
  t.strictSame(cookie.open(sealed), STEP)
  const email: FlowStep = { step: 'email_code', email: 'a@example.com', rd: '/x' }
  t.strictSame(cookie.open(cookie.seal(email, 600)), email)
})

t.test('a step lives until its own time, not a second longer', async (t) => {
  const cookie = flowCookie(keyA)
  const sealed = cookie.seal(STEP, 300)
  cookie.at.now += 299_999
  t.strictSame(cookie.open(sealed), STEP, 'just before')
  cookie.at.now += 1
  t.equal(cookie.open(sealed), undefined, 'at its time')
})

t.test('absent, forged, too long, sealed for another name or by a retired key: undefined, never a throw', async (t) => {
  const cookie = flowCookie(keyA)
  const sealed = cookie.seal(STEP, 300)
  t.equal(cookie.open(undefined), undefined)
  t.equal(cookie.open(''), undefined)
  t.equal(cookie.open('garbage'), undefined)
  const parts = sealed.split('.')
  const body = parts[2] ?? ''
  parts[2] = `${body.slice(0, 4)}${body[4] === 'A' ? 'B' : 'A'}${body.slice(5)}`
  t.equal(cookie.open(parts.join('.')), undefined, 'one ciphertext character changed')
  t.equal(cookie.open(`${sealed}${'A'.repeat(4097 - sealed.length)}`), undefined, 'longer than 4096')
  const envelope = new Envelope(parseDataKeys(keyA))
  t.equal(cookie.open(envelope.seal(JSON.stringify({ exp: 9e9, value: STEP }), 'another-cookie')), undefined, 'bound to the cookie\'s name')
  t.strictSame(cookie.open(envelope.seal(JSON.stringify({ exp: 9e9, value: STEP }), '__Host-gh_flow')), STEP, 'the control: the right name opens')
  t.equal(cookie.open(envelope.seal('not json', '__Host-gh_flow')), undefined, 'not JSON')

  t.strictSame(flowCookie(`${keyB},${keyA}`).open(sealed), STEP, 'a rotated list still opens what the old first key sealed')
  t.equal(flowCookie(keyB).open(sealed), undefined, 'a retired key opens nothing')
})
