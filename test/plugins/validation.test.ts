import t, { type Test } from 'tap'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { dive, omitEmpty, required } from '../../schemas/rule-wrappers.js'
import { build, type TestContext } from '../helper.js'

/*
 * Every planned rule (docs/validation.md) proved through HTTP: a test-only route whose TypeBox body uses
 * each rule, registered on the real app before it is ready.
 */

const Address = Type.Object({
  city: required(Type.String({ maxLength: 60 })),
  zip: Type.Optional(Type.String({ len: 5 })),
  // required by being listed, without required(): absent or null still report `required`
  country: Type.Union([Type.Literal('FR'), Type.Literal('DE')])
}, { additionalProperties: false })

const Contact = Type.Object({
  email: required(Type.String({ format: 'email', maxLength: 254 })),
  phone: Type.Optional(Type.String({ format: 'phone', maxLength: 16 }))
}, { additionalProperties: false })

const RulesBody = Type.Object({
  name: required(Type.String({ minLength: 2, maxLength: 10 })),
  count: Type.Optional(required(Type.Integer({ minimum: 1, maximum: 5 }))),
  email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
  website: Type.Optional(Type.String({ format: 'url', maxLength: 2048 })),
  code: Type.Optional(Type.String({ len: 4 })),
  api_key: Type.Optional(Type.String({ startsWith: 'sk_', maxLength: 64 })),
  password: Type.Optional(Type.String({ format: 'password', maxLength: 1024 })),
  passphrase: Type.Optional(Type.String({ format: 'strong_password', maxLength: 1024 })),
  phone: Type.Optional(Type.String({ format: 'phone', maxLength: 16 })),
  slug: Type.Optional(Type.String({ format: 'slug', maxLength: 64 })),
  username: Type.Optional(Type.String({ format: 'username', maxLength: 20 })),
  birthday: Type.Optional(Type.String({ format: 'date', maxLength: 10 })),
  starts_on: Type.Optional(Type.String({ format: 'future_date', maxLength: 10 })),
  nickname: Type.Optional(omitEmpty(Type.String({ format: 'username', minLength: 5, maxLength: 20 }))),
  aliases: Type.Optional(omitEmpty(dive(Type.String({ maxLength: 10 }), { minItems: 2, maxItems: 3 }))),
  tags: Type.Optional(dive(Type.String({ format: 'slug', minLength: 2, maxLength: 20 }), { minItems: 2, maxItems: 3 })),
  labels: Type.Optional(dive(required(Type.String({ maxLength: 10 })), { maxItems: 3 })),
  pair: Type.Optional(Type.Array(Type.Integer(), { len: 2, maxItems: 10 })),
  address: Type.Optional(Address),
  contacts: Type.Optional(dive(Contact, { maxItems: 3 }))
}, { additionalProperties: false })

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)

const RulesQuery = Type.Object({
  from: Type.String({ format: 'date', maxLength: 10 }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
  code: Type.Optional(Type.String({ len: 3 }))
}, { additionalProperties: false })

async function rulesApp (t: TestContext, values: Record<string, unknown> = {}): Promise<FastifyInstance> {
  return await build(t, values, {
    setup: (app) => {
      app.post('/test/rules', { schema: { body: RulesBody } }, async (request) => ({ accepted: request.body }))
      app.get('/test/rules', { schema: { querystring: RulesQuery } }, async (request) => ({ accepted: request.query }))
    }
  })
}

const invalid = (errors: Record<string, string[]>) => ({
  error: 'Validation failed',
  message: 'The given data was invalid',
  code: 'validation_failed',
  errors
})

/** Posts each body and expects the whole 422 body with exactly these errors. */
async function expectErrors (t: Test, app: FastifyInstance, cases: Array<[unknown, Record<string, string[]>]>) {
  for (const [payload, errors] of cases) {
    const res = await app.inject({ method: 'POST', url: '/test/rules', payload: payload as Record<string, unknown> })
    t.equal(res.statusCode, 422, JSON.stringify(payload))
    t.same(res.json(), invalid(errors), JSON.stringify(payload))
  }
}

/** Posts each body and expects it accepted unchanged. */
async function expectAccepted (t: Test, app: FastifyInstance, payloads: Array<Record<string, unknown>>) {
  for (const payload of payloads) {
    const res = await app.inject({ method: 'POST', url: '/test/rules', payload })
    t.equal(res.statusCode, 200, JSON.stringify(payload))
    t.same(res.json(), { accepted: payload }, JSON.stringify(payload))
  }
}

t.test('a body that satisfies every rule is accepted', async (t) => {
  const app = await rulesApp(t)
  await expectAccepted(t, app, [
    { name: 'Ann' },
    {
      name: 'Ann',
      count: 5,
      email: 'ann@example.com',
      website: 'https://example.com/path?q=1',
      code: 'AB12',
      api_key: 'sk_live_123',
      password: 'Abcdef1!',
      passphrase: 'Abcdefghij1!',
      phone: '+4915123456789',
      slug: 'my-post-2',
      username: 'ann_99',
      birthday: '2024-02-29',
      starts_on: day(1),
      nickname: 'annie',
      aliases: ['a', 'b'],
      tags: ['go', 'ts-5'],
      pair: [1, 2],
      address: { city: 'Lyon', zip: '69001', country: 'FR' },
      contacts: [{ email: 'bob@example.com', phone: '0612345678' }, { email: 'eve@example.com' }]
    }
  ])
})

t.test('required: absent, null, empty and blank values all report the required message', async (t) => {
  const app = await rulesApp(t)
  const message = { name: ['The name field is required'] }
  await expectErrors(t, app, [
    [{}, message],
    [{ name: null }, message],
    [{ name: '' }, message],
    [{ name: ' \t ' }, message],
    // a required number sent as null is absent too, not a type error
    [{ name: 'Ann', count: null }, { count: ['The count field is required'] }]
  ])
})

t.test('an absent body reports its required fields by name', async (t) => {
  const app = await rulesApp(t)
  const res = await app.inject({ method: 'POST', url: '/test/rules' })
  t.equal(res.statusCode, 422)
  t.same(res.json(), invalid({ name: ['The name field is required'] }))
})

t.test('min and max: characters for strings, the bare number for numbers', async (t) => {
  const app = await rulesApp(t)
  await expectErrors(t, app, [
    [{ name: 'A' }, { name: ['The name field must be at least 2 characters'] }],
    [{ name: 'A'.repeat(11) }, { name: ['The name field must not exceed 10 characters'] }],
    [{ name: 'Ann', count: 0 }, { count: ['The count field must be at least 1'] }],
    [{ name: 'Ann', count: 6 }, { count: ['The count field must not exceed 5'] }],
    [{ name: 'Ann', tags: ['go'] }, { tags: ['The tags field must contain at least 2 items'] }],
    [{ name: 'Ann', tags: ['a1', 'b1', 'c1', 'd1'] }, { tags: ['The tags field must not contain more than 3 items'] }]
  ])
  // lengths count characters, not UTF-16 units: two emoji are two characters
  await expectAccepted(t, app, [{ name: '😀😀' }])
})

t.test('types are not coerced in a body', async (t) => {
  const app = await rulesApp(t)
  await expectErrors(t, app, [
    [{ name: 'Ann', count: '3' }, { count: ['The count field is invalid'] }],
    [{ name: ['Ann'] }, { name: ['The name field is invalid'] }],
    [{ name: 'Ann', count: 2.5 }, { count: ['The count field is invalid'] }]
  ])
})

t.test('email and url', async (t) => {
  const app = await rulesApp(t)
  await expectErrors(t, app, [
    [{ name: 'Ann', email: 'ann@' }, { email: ['The email field must be a valid email address'] }],
    [{ name: 'Ann', email: 'ann example.com' }, { email: ['The email field must be a valid email address'] }],
    [{ name: 'Ann', website: 'example.com' }, { website: ['The website field must be a valid URL'] }],
    [{ name: 'Ann', website: 'https://exa mple.com' }, { website: ['The website field must be a valid URL'] }]
  ])
  await expectAccepted(t, app, [{ name: 'Ann', email: 'a.b+c@sub.example.org', website: 'http://localhost:3000/x' }])
})

t.test('len: exact characters for a string, exact items for an array', async (t) => {
  const app = await rulesApp(t)
  await expectErrors(t, app, [
    [{ name: 'Ann', code: 'ABC' }, { code: ['The code field must be exactly 4 characters'] }],
    [{ name: 'Ann', code: 'ABCDE' }, { code: ['The code field must be exactly 4 characters'] }],
    [{ name: 'Ann', pair: [1, 2, 3] }, { pair: ['The pair field must contain exactly 2 items'] }]
  ])
})

t.test('startswith: a value without the prefix is invalid', async (t) => {
  const app = await rulesApp(t)
  await expectErrors(t, app, [
    [{ name: 'Ann', api_key: 'pk_live_123' }, { api_key: ['The api_key field is invalid'] }],
    [{ name: 'Ann', api_key: 'SK_live' }, { api_key: ['The api_key field is invalid'] }]
  ])
  await expectAccepted(t, app, [{ name: 'Ann', api_key: 'sk_' }])
})

t.test('password and strong_password need every character class and their length', async (t) => {
  const app = await rulesApp(t)
  const password = ['The password field must contain at least one uppercase letter, one lowercase letter, one digit, and one special character']
  const strong = ['The passphrase field must be at least 12 characters with uppercase, lowercase, digit, and special character']
  await expectErrors(t, app, [
    [{ name: 'Ann', password: 'abcdef1!' }, { password }],
    [{ name: 'Ann', password: 'ABCDEF1!' }, { password }],
    [{ name: 'Ann', password: 'Abcdefg!' }, { password }],
    [{ name: 'Ann', password: 'Abcdefg1' }, { password }],
    [{ name: 'Ann', password: 'Abcd1!' }, { password }],
    [{ name: 'Ann', passphrase: 'Abcdefghi1!' }, { passphrase: strong }],
    [{ name: 'Ann', passphrase: 'abcdefghij1!' }, { passphrase: strong }]
  ])
  await expectAccepted(t, app, [{ name: 'Ann', password: 'aB3~x{}|', passphrase: 'Zz9-Zz9-Zz9-' }])
})

t.test('phone, slug and username', async (t) => {
  const app = await rulesApp(t)
  const phone = ['The phone field must be a valid phone number']
  const slug = ['The slug field must contain only lowercase letters, numbers, and hyphens']
  const username = ['The username field must contain only letters, numbers, and underscores']
  await expectErrors(t, app, [
    [{ name: 'Ann', phone: '123456789' }, { phone }],
    [{ name: 'Ann', phone: '1234567890123456' }, { phone }],
    [{ name: 'Ann', phone: '06-12-34-56-78' }, { phone }],
    [{ name: 'Ann', slug: 'My Post' }, { slug }],
    [{ name: 'Ann', slug: 'my_post' }, { slug }],
    [{ name: 'Ann', username: 'ab' }, { username }],
    [{ name: 'Ann', username: 'a'.repeat(21) }, { username: ['The username field must not exceed 20 characters', ...username] }],
    [{ name: 'Ann', username: 'ann-99' }, { username }]
  ])
  await expectAccepted(t, app, [
    { name: 'Ann', phone: '1234567890', slug: '', username: 'abc' },
    { name: 'Ann', phone: '+123456789012345', slug: '0-a-z', username: 'A_b_' + '9'.repeat(16) }
  ])
})

t.test('date is a real calendar day; future_date is later than today (UTC)', async (t) => {
  const app = await rulesApp(t)
  const invalidDate = (v: string): [unknown, Record<string, string[]>] => [{ name: 'Ann', birthday: v }, { birthday: ['The birthday field is invalid'] }]
  const notFuture = (v: string): [unknown, Record<string, string[]>] => [{ name: 'Ann', starts_on: v }, { starts_on: ['The starts_on field is invalid'] }]
  await expectErrors(t, app, [
    invalidDate('2023-02-30'),
    invalidDate('2023-02-29'),
    invalidDate('2100-02-29'),
    invalidDate('2023-13-01'),
    invalidDate('2023-04-31'),
    invalidDate('2023-1-05'),
    invalidDate('05/01/2023'),
    notFuture(day(0)),
    notFuture(day(-1)),
    notFuture('2999-02-30')
  ])
  await expectAccepted(t, app, [{ name: 'Ann', birthday: '2000-02-29', starts_on: '2999-12-31' }])
})

t.test('omitempty accepts an empty value and applies every rule to any other', async (t) => {
  const app = await rulesApp(t)
  await expectAccepted(t, app, [{ name: 'Ann', nickname: '', aliases: [] }])
  await expectErrors(t, app, [
    // several failing rules on one field are all reported
    [{ name: 'Ann', nickname: 'a!' }, {
      nickname: ['The nickname field must be at least 5 characters', 'The nickname field must contain only letters, numbers, and underscores']
    }],
    [{ name: 'Ann', aliases: ['a'] }, { aliases: ['The aliases field must contain at least 2 items'] }],
    // null is not empty, and the other type's empty value is not either
    [{ name: 'Ann', nickname: null }, { nickname: ['The nickname field is invalid'] }],
    [{ name: 'Ann', nickname: [] }, { nickname: ['The nickname field is invalid'] }]
  ])
})

t.test('the rules apply to a query string too, where values are coerced', async (t) => {
  const app = await rulesApp(t)
  const ok = await app.inject({ method: 'GET', url: '/test/rules?from=2024-02-29&limit=5' })
  t.equal(ok.statusCode, 200)
  t.same(ok.json(), { accepted: { from: '2024-02-29', limit: 5 } })
  const cases: Array<[string, Record<string, string[]>]> = [
    ['', { from: ['The from field is required'] }],
    ['?from=2023-02-30&limit=0&code=abcd', {
      from: ['The from field is invalid'],
      limit: ['The limit field must be at least 1'],
      code: ['The code field must be exactly 3 characters']
    }],
    ['?from=2024-01-01&limit=x&sort=up', { limit: ['The limit field is invalid'], sort: ['The sort field is invalid'] }]
  ]
  for (const [query, errors] of cases) {
    const res = await app.inject({ method: 'GET', url: `/test/rules${query}` })
    t.equal(res.statusCode, 422, query)
    t.same(res.json(), invalid(errors), query)
  }
})

t.test('omitEmpty refuses a type that has no empty value', async (t) => {
  t.throws(() => omitEmpty(Type.Integer()), new TypeError('omitEmpty applies to strings and arrays, not integer'))
})

t.test('dive applies the item rules to each element, reported at field.index', async (t) => {
  const app = await rulesApp(t)
  await expectErrors(t, app, [
    [{ name: 'Ann', tags: ['ok', 'Bad Tag', 'x'] }, {
      'tags.1': ['The tags.1 field must contain only lowercase letters, numbers, and hyphens'],
      'tags.2': ['The tags.2 field must be at least 2 characters']
    }],
    [{ name: 'Ann', tags: ['ok', 7, null] }, { 'tags.1': ['The tags.1 field is invalid'], 'tags.2': ['The tags.2 field is invalid'] }],
    // an element rule may be required() too: a blank or null element is then missing
    [{ name: 'Ann', labels: ['a', ' ', null] }, { 'labels.1': ['The labels.1 field is required'], 'labels.2': ['The labels.2 field is required'] }],
    [{ name: 'Ann', contacts: [{ email: 'bob@example.com' }, { email: 'bad', phone: '12' }, {}] }, {
      'contacts.1.email': ['The contacts.1.email field must be a valid email address'],
      'contacts.1.phone': ['The contacts.1.phone field must be a valid phone number'],
      'contacts.2.email': ['The contacts.2.email field is required']
    }]
  ])
})

t.test('nested objects report dotted paths, unknown nested fields included', async (t) => {
  const app = await rulesApp(t)
  await expectErrors(t, app, [
    [{ name: 'Ann', address: {} }, {
      'address.city': ['The address.city field is required'],
      'address.country': ['The address.country field is required']
    }],
    [{ name: 'Ann', address: { city: '  ', zip: '123', country: null } }, {
      'address.city': ['The address.city field is required'],
      'address.zip': ['The address.zip field must be exactly 5 characters'],
      'address.country': ['The address.country field is required']
    }],
    [{ name: 'Ann', address: { city: 'Lyon', country: 'US' } }, { 'address.country': ['The address.country field is invalid'] }],
    [{ name: 'Ann', address: { city: 'Lyon', country: 'FR', region: 'Rhône' } }, { 'address.region': ['The address.region field is invalid'] }],
    [{ name: 'Ann', address: 'Lyon' }, { address: ['The address field is invalid'] }]
  ])
})

t.test('every failing rule of every field is reported, in the schema\'s order', async (t) => {
  const app = await rulesApp(t)
  await expectErrors(t, app, [[{
    extra: true,
    contacts: [{}],
    address: { zip: 1 },
    tags: ['A'],
    birthday: '2023-02-30',
    username: 'a',
    slug: 'A',
    phone: 'x',
    passphrase: 'x',
    password: 'x',
    api_key: 'x',
    code: 'x',
    website: 'x',
    email: 'x',
    count: 0,
    name: ''
  }, {
    name: ['The name field is required'],
    count: ['The count field must be at least 1'],
    email: ['The email field must be a valid email address'],
    website: ['The website field must be a valid URL'],
    code: ['The code field must be exactly 4 characters'],
    api_key: ['The api_key field is invalid'],
    password: ['The password field must contain at least one uppercase letter, one lowercase letter, one digit, and one special character'],
    passphrase: ['The passphrase field must be at least 12 characters with uppercase, lowercase, digit, and special character'],
    phone: ['The phone field must be a valid phone number'],
    slug: ['The slug field must contain only lowercase letters, numbers, and hyphens'],
    username: ['The username field must contain only letters, numbers, and underscores'],
    birthday: ['The birthday field is invalid'],
    tags: ['The tags field must contain at least 2 items'],
    'tags.0': [
      'The tags.0 field must be at least 2 characters',
      'The tags.0 field must contain only lowercase letters, numbers, and hyphens'
    ],
    'address.city': ['The address.city field is required'],
    'address.zip': ['The address.zip field is invalid'],
    'address.country': ['The address.country field is required'],
    'contacts.0.email': ['The contacts.0.email field is required'],
    extra: ['The extra field is invalid']
  }]])
})

t.test('VALIDATION_ERROR_DETAILS adds {field, tag, value, message} for each failure, passwords blanked', async (t) => {
  const app = await rulesApp(t, { VALIDATION_ERROR_DETAILS: true })
  const res = await app.inject({
    method: 'POST',
    url: '/test/rules',
    payload: {
      name: null,
      count: 9,
      password: 'weakpassword',
      passphrase: 'weak-phrase',
      nickname: 'a!',
      tags: ['ok', 'NO'],
      address: { city: 'Lyon', zip: 75001, country: 'FR' },
      contacts: [{ email: 'x', password: 'hunter2' }]
    }
  })
  t.equal(res.statusCode, 422)
  const body = res.json()
  t.same(body, {
    ...invalid({
      name: ['The name field is required'],
      count: ['The count field must not exceed 5'],
      password: ['The password field must contain at least one uppercase letter, one lowercase letter, one digit, and one special character'],
      passphrase: ['The passphrase field must be at least 12 characters with uppercase, lowercase, digit, and special character'],
      nickname: ['The nickname field must be at least 5 characters', 'The nickname field must contain only letters, numbers, and underscores'],
      'tags.1': ['The tags.1 field must contain only lowercase letters, numbers, and hyphens'],
      'address.zip': ['The address.zip field is invalid'],
      'contacts.0.email': ['The contacts.0.email field must be a valid email address'],
      'contacts.0.password': ['The contacts.0.password field is invalid']
    }),
    details: [
      { field: 'name', tag: 'required', value: 'null', message: 'The name field is required' },
      { field: 'count', tag: 'max', value: '9', message: 'The count field must not exceed 5' },
      { field: 'password', tag: 'password', value: '', message: 'The password field must contain at least one uppercase letter, one lowercase letter, one digit, and one special character' },
      // blanked for its strong_password format, though its name does not say password
      { field: 'passphrase', tag: 'strong_password', value: '', message: 'The passphrase field must be at least 12 characters with uppercase, lowercase, digit, and special character' },
      { field: 'nickname', tag: 'min', value: 'a!', message: 'The nickname field must be at least 5 characters' },
      { field: 'nickname', tag: 'username', value: 'a!', message: 'The nickname field must contain only letters, numbers, and underscores' },
      { field: 'tags.1', tag: 'slug', value: 'NO', message: 'The tags.1 field must contain only lowercase letters, numbers, and hyphens' },
      { field: 'address.zip', tag: 'type', value: '75001', message: 'The address.zip field is invalid' },
      { field: 'contacts.0.email', tag: 'email', value: 'x', message: 'The contacts.0.email field must be a valid email address' },
      { field: 'contacts.0.password', tag: 'unknown', value: '', message: 'The contacts.0.password field is invalid' }
    ]
  })
  for (const detail of body.details) {
    for (const key of ['field', 'tag', 'value', 'message']) t.type(detail[key], 'string')
  }
  t.notMatch(res.body, /weak|hunter2/)
})

t.test('details show an absent value as empty and a structured one as JSON, passwords inside blanked', async (t) => {
  const app = await rulesApp(t, { VALIDATION_ERROR_DETAILS: true })
  const res = await app.inject({
    method: 'POST',
    url: '/test/rules',
    payload: { count: 1, tags: ['ok', { password: 'hunter2', n: 1 }], pair: [1] }
  })
  t.equal(res.statusCode, 422)
  t.same(res.json().details, [
    { field: 'name', tag: 'required', value: '', message: 'The name field is required' },
    { field: 'tags.1', tag: 'type', value: '{"password":"","n":1}', message: 'The tags.1 field is invalid' },
    { field: 'pair', tag: 'len', value: '[1]', message: 'The pair field must contain exactly 2 items' }
  ])
  t.notMatch(res.body, /hunter2/)
})

t.test('without VALIDATION_ERROR_DETAILS a 422 from the rules route has no details', async (t) => {
  const app = await rulesApp(t)
  const res = await app.inject({ method: 'POST', url: '/test/rules', payload: { name: 'A', password: 'weak' } })
  t.equal(res.statusCode, 422)
  t.strictSame(res.json(), invalid({
    name: ['The name field must be at least 2 characters'],
    password: ['The password field must contain at least one uppercase letter, one lowercase letter, one digit, and one special character']
  }))
})

t.test('the README example schema answers the documented 422', async (t) => {
  const CreateProjectRequest = Type.Object({
    name: required(Type.String({ minLength: 2, maxLength: 100 })),
    slug: Type.String({ format: 'slug', minLength: 3, maxLength: 64 }),
    homepage: Type.Optional(omitEmpty(Type.String({ format: 'url', maxLength: 2048 }))),
    api_key: Type.Optional(Type.String({ startsWith: 'sk_', maxLength: 64 })),
    launch_on: Type.Optional(Type.String({ format: 'future_date', maxLength: 10 })),
    tags: Type.Optional(dive(Type.String({ format: 'slug', minLength: 2, maxLength: 20 }), { maxItems: 10 })),
    owner: Type.Object({
      email: required(Type.String({ format: 'email', maxLength: 254 })),
      phone: Type.Optional(Type.String({ format: 'phone', maxLength: 16 }))
    }, { additionalProperties: false })
  }, { additionalProperties: false })
  const app = await build(t, { VALIDATION_ERROR_DETAILS: true }, {
    setup: (app) => app.post('/test/projects', { schema: { body: CreateProjectRequest } }, async () => ({ ok: true }))
  })
  const res = await app.inject({
    method: 'POST',
    url: '/test/projects',
    payload: { name: ' ', slug: 'My Site', homepage: '', tags: ['ok', 'X'], owner: { email: 'bob@' } }
  })
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    ...invalid({
      name: ['The name field is required'],
      slug: ['The slug field must contain only lowercase letters, numbers, and hyphens'],
      'tags.1': ['The tags.1 field must be at least 2 characters', 'The tags.1 field must contain only lowercase letters, numbers, and hyphens'],
      'owner.email': ['The owner.email field must be a valid email address']
    }),
    details: [
      { field: 'name', tag: 'required', value: ' ', message: 'The name field is required' },
      { field: 'slug', tag: 'slug', value: 'My Site', message: 'The slug field must contain only lowercase letters, numbers, and hyphens' },
      { field: 'tags.1', tag: 'min', value: 'X', message: 'The tags.1 field must be at least 2 characters' },
      { field: 'tags.1', tag: 'slug', value: 'X', message: 'The tags.1 field must contain only lowercase letters, numbers, and hyphens' },
      { field: 'owner.email', tag: 'email', value: 'bob@', message: 'The owner.email field must be a valid email address' }
    ]
  })
})
