import type { FastifyInstance } from 'fastify'
import t from 'tap'
import errorHandlerPlugin from '../../plugins/error-handler.js'
import jsonBodyPlugin from '../../plugins/json-body.js'
import { buildBare, type TestContext } from '../helper.js'

/*
 * plugins/json-body.ts on a bare Fastify with the error handler: the one body parser takes
 * application/json in UTF-8 and refuses everything else with a catalogued answer.
 */

const UNSUPPORTED = { error: 'Unsupported Media Type', message: 'The request body must be application/json (UTF-8)', code: 'unsupported_media_type' }
const invalidJson = (message: string) => ({ error: 'Invalid JSON', message, code: 'invalid_json' })

async function echoApp (t: TestContext): Promise<FastifyInstance> {
  return await buildBare(t, [errorHandlerPlugin, jsonBodyPlugin], (app) => {
    app.post('/echo', async (request) => ({ body: request.body ?? null }))
  })
}

const post = (app: FastifyInstance, payload: string | Buffer, contentType = 'application/json') =>
  app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': contentType }, payload })

t.test('a JSON body in UTF-8 reaches the handler parsed, with or without a charset', async (t) => {
  const app = await echoApp(t)
  for (const type of ['application/json', 'application/json; charset=utf-8', 'application/json; charset="UTF8"']) {
    const res = await post(app, '{"name":"Zoë","n":[1,2]}', type)
    t.equal(res.statusCode, 200, type)
    t.same(res.json(), { body: { name: 'Zoë', n: [1, 2] } }, type)
  }
})

t.test('an empty body is no body, not an error', async (t) => {
  const app = await echoApp(t)
  const res = await post(app, '')
  t.equal(res.statusCode, 200)
  t.same(res.json(), { body: null })
})

t.test('any other media type or charset is 415, a form post included', async (t) => {
  const app = await echoApp(t)
  for (const [payload, type] of [['a=b', 'application/x-www-form-urlencoded'], ['{}', 'text/plain'], ['{}', 'application/json; charset=latin1']] as const) {
    const res = await post(app, payload, type)
    t.equal(res.statusCode, 415, type)
    t.same(res.json(), UNSUPPORTED, type)
  }
})

t.test('a body that is not JSON answers 400 invalid_json with the parser\'s detail', async (t) => {
  const app = await echoApp(t)
  let detail = ''
  try { JSON.parse('{"a":') } catch (err) { detail = (err as Error).message }
  const res = await post(app, '{"a":')
  t.equal(res.statusCode, 400)
  t.same(res.json(), invalidJson(detail))
})

t.test('invalid UTF-8, deep nesting, a lone surrogate escape and a __proto__ key are each invalid_json', async (t) => {
  const app = await echoApp(t)
  const cases: [string | Buffer, string][] = [
    [Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), 'The request body is not valid UTF-8'],
    ['['.repeat(33) + ']'.repeat(33), 'The request body is nested deeper than 32 levels'],
    ['{"name":"\\ud800"}', 'The request body contains an unpaired surrogate escape'],
    ['{"__proto__":{"admin":true}}', 'Object contains forbidden prototype property']
  ]
  for (const [payload, message] of cases) {
    const res = await post(app, payload)
    t.equal(res.statusCode, 400, message)
    t.same(res.json(), invalidJson(message), message)
  }
  // the negative control: 32 levels and a paired surrogate escape are fine
  t.equal((await post(app, '['.repeat(32) + ']'.repeat(32))).statusCode, 200)
  t.same((await post(app, '{"name":"\\ud83d\\ude00"}')).json(), { body: { name: '😀' } })
})
