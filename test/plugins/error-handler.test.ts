import t, { type Test } from 'tap'
import errorHandlerPlugin from '../../plugins/error-handler.js'
import { catalogueCode, RateLimited, TokenExpired, ValidationFailed } from '../../src/errors.js'
import { buildBare, buildFrom, rawRequest, testConfig } from '../helper.js'

/** The error handler alone, on a bare Fastify, with one route throwing what the test gives it. */
async function appThrowing (t: Test, error: unknown) {
  const app = await buildBare(t, [errorHandlerPlugin], (app) => { app.get('/', async () => { throw error }) })
  return await app.inject({ method: 'GET', url: '/' })
}

t.test('RateLimited carries its Retry-After as a property, at least one whole second', async (t) => {
  t.equal(new RateLimited(12.2).retryAfter, 13)
  t.equal(new RateLimited(0).retryAfter, 1)
  t.ok(Object.hasOwn(new RateLimited(5), 'retryAfter'))
  t.equal(catalogueCode(new RateLimited(5)), 'rate_limited')
})

t.test('a catalogued error is recognised by class, not by a code string that looks alike', async (t) => {
  t.equal(catalogueCode(new TokenExpired()), 'token_expired')
  t.equal(catalogueCode(Object.assign(new Error('x'), { code: 'TOKEN_EXPIRED' })), undefined)
})

t.test('a RateLimited answers 429 rate_limited with Retry-After', async (t) => {
  const res = await appThrowing(t, new RateLimited(30))
  t.equal(res.statusCode, 429)
  t.equal(res.headers['retry-after'], '30')
  t.same(res.json(), { error: 'Too Many Requests', message: 'Too many attempts, try again later', code: 'rate_limited' })
})

t.test('a token error answers 401 with the RFC 6750 invalid_token challenge', async (t) => {
  const res = await appThrowing(t, new TokenExpired())
  t.equal(res.statusCode, 401)
  t.equal(res.headers['www-authenticate'], 'Bearer realm="gatehouse", error="invalid_token", error_description="The token has expired"')
  t.same(res.json(), { error: 'Unauthorized', message: 'The token has expired', code: 'token_expired' })
})

t.test('ValidationFailed answers 422 with its field map', async (t) => {
  const res = await appThrowing(t, new ValidationFailed({ id: ['The id field is invalid'] }))
  t.equal(res.statusCode, 422)
  t.same(res.json(), { error: 'Validation failed', message: 'The given data was invalid', code: 'validation_failed', errors: { id: ['The id field is invalid'] } })
})

t.test('a Fastify error is answered as its catalogue entry, never with its own message', async (t) => {
  const error = Object.assign(new Error('Unsupported Media Type: text/evil'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 })
  const res = await appThrowing(t, error)
  t.equal(res.statusCode, 415)
  t.same(res.json(), { error: 'Unsupported Media Type', message: 'The request body must be application/json (UTF-8)', code: 'unsupported_media_type' })
})

t.test('any other 4xx is bad_request with its status; anything else is a 500 with the request id', async (t) => {
  const teapot = await appThrowing(t, Object.assign(new Error('secret detail'), { statusCode: 418 }))
  t.equal(teapot.statusCode, 418)
  t.same(teapot.json(), { error: 'I\'m a Teapot', message: 'The request is malformed', code: 'bad_request' })
  const failure = await appThrowing(t, new Error('secret detail'))
  t.equal(failure.statusCode, 500)
  const body = failure.json()
  t.same(body, { error: 'Internal Server Error', message: 'An unexpected error occurred', code: 'internal_error', request_id: body.request_id })
  t.type(body.request_id, 'string')
})

t.test('at LOG_LEVEL=debug a request Node refuses is logged without its bytes: no cookie, no Authorization', async (t) => {
  const lines: string[] = []
  const app = await buildFrom(t, testConfig(t, { LOG_LEVEL: 'debug' }), { logStream: { write: (line) => { lines.push(line) } } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const answer = await rawRequest(app, 'GET /health HTTP/1.1\r\nHost: localhost\r\nCookie: access_token=cookie-secret-value\r\nAuthorization: Bearer header-secret-value\r\nX Bad: a\r\n\r\n')
  t.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/)
  const log = lines.join('')
  const line = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((record) => record.msg === 'client error')
  t.match(line, { level: 20, code: 'HPE_INVALID_HEADER_TOKEN' }, 'the refusal is logged, with its code')
  // as text, and as the JSON byte array pino writes for a Buffer such as Node's `rawPacket`
  for (const secret of ['cookie-secret-value', 'header-secret-value']) {
    t.notOk(log.includes(secret), `${secret} is not in the log as text`)
    t.notOk(log.includes([...Buffer.from(secret)].join(',')), `${secret} is not in the log as bytes`)
  }
})
