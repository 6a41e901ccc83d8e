// plugins/openapi.ts: /openapi.json gains the passkey routes (SPEC, common rules of §13–§18)
import type { OpenAPIV3_1 as OpenAPI } from 'openapi-types'
import { test } from 'tap'
import { build } from '../../helper.js'
import { passkeyApp } from './support.js'

const ROUTES: Array<[string, string]> = [
  ['post', '/auth/passkeys/register/options'], ['post', '/auth/passkeys/register/verify'], ['post', '/auth/passkeys/login/options'],
  ['post', '/auth/passkeys/login/verify'], ['get', '/api/auth/passkeys'], ['patch', '/api/auth/passkeys/{id}'], ['delete', '/api/auth/passkeys/{id}'],
  ['get', '/api/users/{id}/passkeys'], ['delete', '/api/users/{id}/passkeys/{passkey_id}']
]

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

function schemaOf (document: OpenAPI.Document, method: string, path: string, status: string): unknown {
  const operation = document.paths?.[path]?.[method as 'get'] as OpenAPI.OperationObject | undefined
  return (operation?.responses?.[status] as OpenAPI.ResponseObject | undefined)?.content?.['application/json']?.schema
}

test('with ENABLE_PASSKEYS the document lists every passkey route, tagged, with named schemas; off, none', async (t) => {
  const app = await passkeyApp(t)
  const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenAPI.Document
  for (const [method, path] of ROUTES) {
    const operation = document.paths?.[path]?.[method as 'get'] as OpenAPI.OperationObject | undefined
    t.strictSame(operation?.tags, ['passkeys'], `${method} ${path}`)
  }
  t.same(schemaOf(document, 'post', '/auth/passkeys/register/options', '200'), ref('PasskeyCeremonyOptions'))
  t.same(schemaOf(document, 'post', '/auth/passkeys/register/verify', '201'), ref('Passkey'))
  t.same(schemaOf(document, 'post', '/auth/passkeys/login/verify', '200'), ref('TokenResponse'))
  t.same(schemaOf(document, 'post', '/auth/passkeys/login/verify', '403'), ref('MfaChallenge'))
  t.same(schemaOf(document, 'get', '/api/auth/passkeys', '200'), ref('PasskeyList'))
  t.same(document.tags?.find((tag) => tag.name === 'passkeys'), { name: 'passkeys', description: 'Passkeys (WebAuthn): adding, signing in, as the second factor, listing, removing (switched on)' })

  const off = (await (await build(t)).inject({ method: 'GET', url: '/openapi.json' })).json() as OpenAPI.Document
  t.strictSame(Object.keys(off.paths ?? {}).filter((path) => path.includes('passkeys')), [], 'off: no passkey path')
  t.equal(off.components?.schemas?.Passkey, undefined)
  t.equal(off.tags?.find((tag) => tag.name === 'passkeys'), undefined)
})
