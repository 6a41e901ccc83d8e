// Proves src/errors.ts and plugins/error-handler.ts.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { catalogueEntry, errorCodes } from '../../src/errors.js'
import { build, createUser } from '../helper.js'
import { UUID } from '../patterns.js'

const UNSUPPORTED = {
  error: 'Unsupported Media Type',
  message: 'The request body must be application/json (UTF-8)',
  code: 'unsupported_media_type'
}

/** The message JSON.parse gives for the same text: the parser detail the body must carry. */
function parserDetail (text: string): string {
  try {
    JSON.parse(text)
  } catch (err) {
    return (err as Error).message
  }
  throw new Error(`${text} is valid JSON`)
}

t.test('an unknown route answers 404 not_found', async (t) => {
  const app = await build(t)
  for (const [method, url] of [['GET', '/nope'], ['POST', '/auth/nope'], ['GET', '/api/nope?x=1']] as const) {
    const res = await app.inject({ method, url })
    t.equal(res.statusCode, 404, `${method} ${url}`)
    t.match(res.headers['content-type'], /^application\/json/)
    t.same(res.json(), { error: 'Not Found', message: 'The requested resource was not found', code: 'not_found' })
  }
})

t.test('DELETE /health answers 405 with Allow listing the methods of the path', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'DELETE', url: '/health' })
  t.equal(res.statusCode, 405)
  t.equal(res.headers.allow, 'GET, HEAD')
  t.same(res.json(), { error: 'Method Not Allowed', message: 'Method DELETE is not allowed on this resource', code: 'method_not_allowed' })
})

t.test('GET /auth/login answers 405 with Allow: POST', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'GET', url: '/auth/login?x=1' })
  t.equal(res.statusCode, 405)
  t.equal(res.headers.allow, 'POST')
  t.same(res.json(), { error: 'Method Not Allowed', message: 'Method GET is not allowed on this resource', code: 'method_not_allowed' })
})

t.test('a body over BODY_LIMIT answers 413 payload_too_large', async (t) => {
  const app = await build(t, { BODY_LIMIT: 1024 })
  const payload = JSON.stringify({ email: 'a@b.io', password: 'x'.repeat(1100) })
  const res = await app.inject({ method: 'POST', url: '/auth/login', headers: { 'content-type': 'application/json' }, payload })
  t.equal(res.statusCode, 413)
  t.same(res.json(), { error: 'Payload Too Large', message: 'The request body is too large', code: 'payload_too_large' })
})

t.test('a body just under BODY_LIMIT is read and validated', async (t) => {
  const app = await build(t, { BODY_LIMIT: 1024 })
  const payload = JSON.stringify({ email: 'a@b.io', password: 'x'.repeat(900), extra: 1 })
  const res = await app.inject({ method: 'POST', url: '/auth/login', headers: { 'content-type': 'application/json' }, payload })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    error: 'Validation failed',
    message: 'The given data was invalid',
    code: 'validation_failed',
    errors: { extra: ['The extra field is invalid'] }
  })
})

const FORM_TYPES = [
  ['text/plain', 'email=a@b.io&password=x'],
  ['application/x-www-form-urlencoded', 'email=a%40b.io&password=x'],
  ['multipart/form-data; boundary=XYZ', '--XYZ\r\nContent-Disposition: form-data; name="email"\r\n\r\na@b.io\r\n--XYZ--\r\n'],
  ['application/json; charset=latin1', '{"email":"a@b.io","password":"x"}']
] as const

for (const url of ['/auth/login', '/auth/logout']) {
  t.test(`POST ${url} refuses every content type but JSON in UTF-8 with 415`, async (t) => {
    const app = await build(t)
    for (const [type, payload] of FORM_TYPES) {
      const res = await app.inject({ method: 'POST', url, headers: { 'content-type': type }, payload })
      t.equal(res.statusCode, 415, type)
      t.same(res.json(), UNSUPPORTED, type)
    }
  })
}

t.test('POST /auth/login accepts application/json; charset=utf-8', async (t) => {
  const app = await build(t)
  const user = await createUser(app)
  const res = await app.inject({
    method: 'POST',
    url: '/auth/login',
    headers: { 'content-type': 'application/json; charset=utf-8' },
    payload: JSON.stringify({ email: user.email, password: user.password })
  })
  t.equal(res.statusCode, 200)
  t.match(res.json().access_token, /^[\w-]+\.[\w-]+\.[\w-]+$/)
})

t.test('invalid JSON answers 400 invalid_json with the parser detail', async (t) => {
  const app = await build(t)
  for (const text of ['{"email": "a@b.io",', '{email: 1}', 'nope']) {
    const res = await app.inject({ method: 'POST', url: '/auth/login', headers: { 'content-type': 'application/json' }, payload: text })
    t.equal(res.statusCode, 400, text)
    t.same(res.json(), { error: 'Invalid JSON', message: parserDetail(text), code: 'invalid_json' }, text)
  }
})

t.test('a __proto__ or constructor.prototype key answers 400 invalid_json and pollutes nothing', async (t) => {
  const app = await build(t)
  const bodies = [
    '{"email":"a@b.io","password":"x","__proto__":{"polluted":"yes"}}',
    '{"email":"a@b.io","password":"x","constructor":{"prototype":{"polluted":"yes"}}}',
    '{"nested":{"__proto__":{"polluted":"yes"}}}'
  ]
  for (const payload of bodies) {
    const res = await app.inject({ method: 'POST', url: '/auth/login', headers: { 'content-type': 'application/json' }, payload })
    t.equal(res.statusCode, 400, payload)
    t.same(res.json(), { error: 'Invalid JSON', message: 'Object contains forbidden prototype property', code: 'invalid_json' }, payload)
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  t.equal((Object.prototype as Record<string, unknown>).polluted, undefined)
})

t.test('a body with invalid UTF-8 bytes answers 400 invalid_json', async (t) => {
  const app = await build(t)
  const payload = Buffer.concat([Buffer.from('{"email":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('@b.io","password":"x"}')])
  const res = await app.inject({ method: 'POST', url: '/auth/login', headers: { 'content-type': 'application/json' }, payload })
  t.equal(res.statusCode, 400)
  t.same(res.json(), { error: 'Invalid JSON', message: 'The request body is not valid UTF-8', code: 'invalid_json' })
})

t.test('an unexpected failure answers 500 with the request id and no internals', async (t) => {
  const app = await build(t)
  t.intercept(app.store.users, 'findByEmail', { value: async () => { throw new Error('db exploded: secret-detail') } })
  const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'a@b.io', password: 'whatever-1' } })
  t.equal(res.statusCode, 500)
  const body = res.json()
  t.match(body.request_id, UUID)
  t.same(body, { error: 'Internal Server Error', message: 'An unexpected error occurred', code: 'internal_error', request_id: body.request_id })
  t.notMatch(res.body, /secret-detail/)
  t.notMatch(res.body, /exploded/)
  t.notMatch(res.body, /\bat .*\.(ts|js):\d+/)
  t.notMatch(res.body, /stack/i)
})

t.test('each 500 carries its own request id', async (t) => {
  const app = await build(t)
  t.intercept(app.store.users, 'findByEmail', { value: async () => { throw new Error('db exploded') } })
  const ids = new Set<string>()
  for (let i = 0; i < 2; i++) {
    const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'a@b.io', password: 'whatever-1' } })
    t.equal(res.statusCode, 500)
    ids.add(res.json().request_id)
  }
  t.equal(ids.size, 2)
})

t.test('invalid JSON is reported before missing fields (parse, then validate)', async (t) => {
  const app = await build(t)
  const text = '{"remember": tru'
  const res = await app.inject({ method: 'POST', url: '/auth/login', headers: { 'content-type': 'application/json' }, payload: text })
  t.equal(res.statusCode, 400)
  t.same(res.json(), { error: 'Invalid JSON', message: parserDetail(text), code: 'invalid_json' })

  const valid = await app.inject({ method: 'POST', url: '/auth/login', payload: { remember: true } })
  t.equal(valid.statusCode, 422)
  t.same(valid.json(), {
    error: 'Validation failed',
    message: 'The given data was invalid',
    code: 'validation_failed',
    errors: { email: ['The email field is required'], password: ['The password field is required'] }
  })
})

t.test('without VALIDATION_ERROR_DETAILS a 422 has no details key', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email: 'nope', password: 'secret-value' } })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    error: 'Validation failed',
    message: 'The given data was invalid',
    code: 'validation_failed',
    errors: { email: ['The email field must be a valid email address'] }
  })
  t.notOk('details' in res.json())
})

t.test('VALIDATION_ERROR_DETAILS adds details and never echoes a password', async (t) => {
  const app = await build(t, { VALIDATION_ERROR_DETAILS: true })
  const res = await app.inject({
    method: 'POST',
    url: '/auth/login',
    payload: { email: 'not-an-email', password: 'x'.repeat(1025), remember: 'yes' }
  })
  t.equal(res.statusCode, 422)
  const body = res.json()
  t.same(body, {
    error: 'Validation failed',
    message: 'The given data was invalid',
    code: 'validation_failed',
    errors: {
      email: ['The email field must be a valid email address'],
      password: ['The password field must not exceed 1024 characters'],
      remember: ['The remember field is invalid']
    },
    details: [
      { field: 'email', tag: 'email', value: 'not-an-email', message: 'The email field must be a valid email address' },
      { field: 'password', tag: 'max', value: '', message: 'The password field must not exceed 1024 characters' },
      { field: 'remember', tag: 'type', value: 'yes', message: 'The remember field is invalid' }
    ]
  })
  for (const detail of body.details) {
    for (const key of ['field', 'tag', 'value', 'message']) t.type(detail[key], 'string')
  }
  t.notMatch(res.body, /xxxxxxxx/)
})

t.test('VALIDATION_ERROR_DETAILS hides the password of a register body too', async (t) => {
  const app = await build(t, { VALIDATION_ERROR_DETAILS: true, ENABLE_REGISTER: true })
  const res = await app.inject({
    method: 'POST',
    url: '/auth/register',
    payload: { email: 'ann@example.com', password: 'short', name: 'A', age: 17 }
  })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    error: 'Validation failed',
    message: 'The given data was invalid',
    code: 'validation_failed',
    errors: {
      password: ['The password field must be at least 8 characters'],
      name: ['The name field must be at least 2 characters'],
      age: ['The age field must be at least 18']
    },
    details: [
      { field: 'password', tag: 'min', value: '', message: 'The password field must be at least 8 characters' },
      { field: 'name', tag: 'min', value: 'A', message: 'The name field must be at least 2 characters' },
      { field: 'age', tag: 'min', value: '17', message: 'The age field must be at least 18' }
    ]
  })
  t.notMatch(res.body, /short/)
})

/*
 * The catalogue tested whole (as Fastify core's test/internals/errors.test.js checks its codes
 * against docs/Reference/Errors.md): every code of src/errors.ts is thrown or mapped by the service
 * and listed in docs/api.md#errors with its status, and the docs list no code the catalogue lacks.
 */
const ROOT = join(import.meta.dirname, '..', '..')
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')

function sourceFiles (dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.c?ts$/.test(entry.name) ? [path] : []
  })
}

/** code → the classes src/errors.ts makes for it, subclasses included. */
function classesByCode (catalogue: string): Map<string, string[]> {
  const classes = new Map<string, string[]>()
  for (const [, name = '', code = ''] of catalogue.matchAll(/const (\w+) = catalogued\('(\w+)'\)/g)) {
    classes.set(code, [...(classes.get(code) ?? []), name])
  }
  for (const [, sub = '', base = '', code = ''] of catalogue.matchAll(/class (\w+) extends (?:(\w+) \{|catalogued\('(\w+)'\))/g)) {
    const of = code !== '' ? code : [...classes].find(([, names]) => names.includes(base))?.[0]
    if (of !== undefined) classes.set(of, [...(classes.get(of) ?? []), sub])
  }
  return classes
}

/** Whether the service's code (not the catalogue itself) throws the code's error or answers the code by name. */
function isUsed (code: string, classes: readonly string[], sources: readonly string[]): boolean {
  return sources.some((text) => text.includes(`'${code}'`) || classes.some((name) => text.includes(`new ${name}(`)))
}

/** code → status, from the table of docs/api.md#errors. */
function documentedCodes (markdown: string): Map<string, number> {
  const section = markdown.slice(markdown.indexOf('\n## Errors'), markdown.indexOf('\n## ', markdown.indexOf('\n## Errors') + 1))
  return new Map([...section.matchAll(/^\| `(\w+)` \| (\d{3}) \|/gm)].map(([, code = '', status = '']) => [code, Number(status)]))
}

t.test('every code of the catalogue is thrown or mapped somewhere in src/, plugins/ or routes/', async (t) => {
  const sources = ['src', 'plugins', 'routes'].flatMap(sourceFiles).filter((f) => f !== 'src/errors.ts').map(read)
  const classes = classesByCode(read('src/errors.ts'))
  t.ok(errorCodes().length >= 29, `${errorCodes().length} codes`)
  t.same(errorCodes().filter((code) => !isUsed(code, classes.get(code) ?? [], sources)), [])
  // the negative control: a code nobody throws, and a class nobody constructs, are reported
  t.notOk(isUsed('made_up_code', ['MadeUp'], sources))
  t.notOk(isUsed('x', ['TokenExpired'], ['throw new TokenExpiredish()']))
  t.ok(isUsed('x', ['TokenExpired'], ['throw new TokenExpired()']))
})

t.test('docs/api.md lists every code of the catalogue with its status, and no other', async (t) => {
  const documented = documentedCodes(read('docs/api.md'))
  t.same(Object.fromEntries([...documented].sort()), Object.fromEntries(errorCodes().map((code) => [code, catalogueEntry(code).status])))
  // the negative control: a table missing a code, or with a wrong status, differs
  const partial = documentedCodes('\n## Errors\n| `not_found` | 404 | x |\n| `rate_limited` | 400 | y |\n## Next\n| `token_invalid` | 401 | z |\n')
  t.same(Object.fromEntries(partial), { not_found: 404, rate_limited: 400 })
})
