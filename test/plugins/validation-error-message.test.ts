// Proves plugins/validation.ts and src/validation/to-validation-failed.ts.
import t from 'tap'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { required } from '../../schemas/rule-wrappers.js'
import { build, type TestContext } from '../helper.js'

/*
 * ajv-errors' `errorMessage` through a real route: a schema words one rule's message for one
 * field, and every other rule and field keeps the library's template.
 */

const OverrideBody = Type.Object({
  name: required(Type.String({ minLength: 2, maxLength: 10 })),
  handle: Type.String({ format: 'username', maxLength: 20, errorMessage: { format: 'Pick a handle of letters, digits and underscores' } }),
  // the same rule without an override: the template
  nickname: Type.Optional(Type.String({ format: 'username', maxLength: 20 })),
  bio: Type.Optional(Type.String({ maxLength: 5, errorMessage: 'Keep the bio short' })),
  password: Type.Optional(Type.String({ format: 'password', maxLength: 1024, errorMessage: { format: 'Too weak' } }))
}, { additionalProperties: false, errorMessage: { required: { handle: 'Choose a handle' } } })

async function overrideApp (t: TestContext, values: Record<string, unknown> = {}): Promise<FastifyInstance> {
  return await build(t, values, {
    setup: (app) => {
      app.post('/test/override', { schema: { body: OverrideBody } }, async (request) => ({ accepted: request.body }))
    }
  })
}

const invalid = (errors: Record<string, string[]>) => ({ error: 'Validation failed', message: 'The given data was invalid', code: 'validation_failed', errors })

t.test('a field\'s errorMessage replaces that rule\'s message; the same rule elsewhere keeps the template', async (t) => {
  const app = await overrideApp(t)
  const res = await app.inject({ method: 'POST', url: '/test/override', payload: { name: 'Ann', handle: 'a b', nickname: 'c d', bio: 'far too long' } })
  t.equal(res.statusCode, 422)
  t.strictSame(res.json(), invalid({
    handle: ['Pick a handle of letters, digits and underscores'],
    nickname: ['The nickname field must contain only letters, numbers, and underscores'],
    bio: ['Keep the bio short']
  }))
})

t.test('an override for one rule leaves the field\'s other rules to the templates', async (t) => {
  const app = await overrideApp(t)
  const res = await app.inject({ method: 'POST', url: '/test/override', payload: { name: 'Ann', handle: 'not a handle at all, too long' } })
  t.equal(res.statusCode, 422)
  t.strictSame(res.json(), invalid({
    handle: ['The handle field must not exceed 20 characters', 'Pick a handle of letters, digits and underscores']
  }))
})

t.test('an object\'s errorMessage for required lands under the missing field; other required fields keep the template', async (t) => {
  const app = await overrideApp(t)
  const res = await app.inject({ method: 'POST', url: '/test/override', payload: {} })
  t.equal(res.statusCode, 422)
  t.strictSame(res.json(), invalid({
    name: ['The name field is required'],
    handle: ['Choose a handle']
  }))
})

t.test('details carry the replaced rule\'s tag with the override message, and still blank a password', async (t) => {
  const app = await overrideApp(t, { VALIDATION_ERROR_DETAILS: true })
  const res = await app.inject({ method: 'POST', url: '/test/override', payload: { name: 'Ann', handle: 'a b', password: 'weak' } })
  t.equal(res.statusCode, 422)
  t.strictSame(res.json(), {
    ...invalid({ handle: ['Pick a handle of letters, digits and underscores'], password: ['Too weak'] }),
    details: [
      { field: 'handle', tag: 'username', value: 'a b', message: 'Pick a handle of letters, digits and underscores' },
      { field: 'password', tag: 'password', value: '', message: 'Too weak' }
    ]
  })
})

t.test('a body that meets every rule is accepted', async (t) => {
  const app = await overrideApp(t)
  const res = await app.inject({ method: 'POST', url: '/test/override', payload: { name: 'Ann', handle: 'ann_1', bio: 'hi' } })
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), { accepted: { name: 'Ann', handle: 'ann_1', bio: 'hi' } })
})
