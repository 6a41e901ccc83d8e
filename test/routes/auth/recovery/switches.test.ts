import t, { type Test } from 'tap'
import { build } from '../../../helper.js'
import { ACCEPTED, post, RECOVERY_ON, RESET_URL } from './support.js'

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const
const NOT_IMPLEMENTED = { error: 'Not Implemented', message: 'This feature is not implemented', code: 'not_implemented' }
const RESET = ['/auth/forgot-password', '/auth/reset-password']
const CODES = ['/auth/send-otp', '/auth/verify-otp']

async function answersNotImplemented (t: Test, app: Awaited<ReturnType<typeof build>>, paths: string[]) {
  for (const url of paths) {
    for (const method of METHODS) {
      const res = await app.inject({ method, url, payload: method === 'GET' || method === 'OPTIONS' ? undefined : { email: 'a@example.com' } })
      t.equal(res.statusCode, 501, `${method} ${url}`)
      t.same(res.json(), NOT_IMPLEMENTED, `${method} ${url}`)
    }
  }
}

t.test('off (the default), every method on the four routes answers 501, and the document keeps them reserved', async (t) => {
  const app = await build(t, { PASSWORD_RESET_URL: RESET_URL })
  await answersNotImplemented(t, app, [...RESET, ...CODES])
  const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json()
  for (const url of [...RESET, ...CODES]) t.same(document.paths[url].post.tags, ['reserved'], url)
})

t.test('each switch takes over its own two paths only', async (t) => {
  const reset = await build(t, { ENABLE_PASSWORD_RESET: true, PASSWORD_RESET_URL: RESET_URL })
  await answersNotImplemented(t, reset, CODES)
  t.equal((await post(reset, '/auth/forgot-password', { email: 'a@example.com' })).statusCode, 202)
  const codes = await build(t, { ENABLE_EMAIL_OTP: true })
  await answersNotImplemented(t, codes, RESET)
  const sent = await post(codes, '/auth/send-otp', { email: 'a@example.com', purpose: 'login' })
  t.equal(sent.statusCode, 202)
  t.same(sent.json(), ACCEPTED)
})

t.test('on, the routes take POST and JSON bodies like every other route, and the document describes them', async (t) => {
  const app = await build(t, RECOVERY_ON)
  const get = await app.inject({ method: 'GET', url: '/auth/forgot-password' })
  t.equal(get.statusCode, 405)
  t.same(get.json(), { error: 'Method Not Allowed', message: 'Method GET is not allowed on this resource', code: 'method_not_allowed' })
  const text = await app.inject({ method: 'POST', url: '/auth/send-otp', headers: { 'content-type': 'text/plain' }, payload: 'email=a@b.io' })
  t.equal(text.statusCode, 415)
  const bad = await post(app, '/auth/send-otp', { email: 'not-an-email', purpose: 'sign_up' })
  t.equal(bad.statusCode, 422)
  t.same(Object.keys(bad.json().errors).sort(), ['email', 'purpose'])
  const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json()
  for (const url of [...RESET, ...CODES]) {
    t.same(document.paths[url].post.tags, ['recovery'], url)
    t.same(Object.keys(document.paths[url]), ['post'], `${url}: POST only`)
  }
  t.same(document.paths['/auth/forgot-password'].post.responses['202'].content['application/json'].schema, { $ref: '#/components/schemas/Message' })
  t.ok(document.components.schemas.EmailVerified, 'EmailVerified is a named component')
  t.ok(document.paths['/auth/enable-2fa'], 'the TOTP paths stay reserved')
})
