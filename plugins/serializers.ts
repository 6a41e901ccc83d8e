import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import fastJsonStringify, { type AnySchema, type Schema } from 'fast-json-stringify'

type Serializer = (document: unknown) => string

/**
 * One compiled serializer per distinct response schema, shared by every route that declares it.
 * Fastify compiles one per route and status code (HEAD routes included): about 200 at start,
 * of some 30 distinct schemas, most of them the shared error body. Each is the same code
 * fast-json-stringify would build for that route, over the same shared schemas.
 *
 * The shared schemas are the root's (plugins/openapi.ts adds them all there); they are read at
 * each compile, and an added one cannot change what a compiled `$ref` points at (ids are
 * unique). A route whose `$ref` names a schema of its own encapsulated context would fail to
 * compile at start, loudly, rather than serialize wrongly.
 * @see https://fastify.dev/docs/latest/Reference/Validation-and-Serialization/#serialization
 */
export default fp(async function serializersPlugin (fastify: FastifyInstance) {
  const compiled = new Map<string, Serializer>()
  fastify.setSerializerCompiler(({ schema }) => {
    const key = JSON.stringify(schema)
    let serializer = compiled.get(key)
    if (serializer === undefined) {
      serializer = fastJsonStringify(schema as AnySchema, { schema: sharedSchemasBut(fastify.getSchemas(), schema) }) as Serializer
      compiled.set(key, serializer)
    }
    return serializer
  })
}, { name: 'serializers' })

/** As Fastify's own compiler: a response schema that is itself a shared one is not also passed as external */
function sharedSchemasBut (shared: Record<string, unknown>, schema: unknown): Record<string, Schema> {
  const id = (schema as { $id?: unknown }).$id
  if (typeof id !== 'string' || !(id in shared)) return shared as Record<string, Schema>
  const { [id]: _itself, ...others } = shared
  return others as Record<string, Schema>
}
