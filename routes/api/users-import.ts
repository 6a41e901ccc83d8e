import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ref } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/errors.js'
import { ImportEnvelope, ImportRequest, ImportResult } from '../../schemas/import.js'
import { refusal } from '../../src/imports/import-service.js'
import type { Claims } from '../../src/tokens/claims.js'

/** 1000 lines of bounded users with hashes fit well inside; the rest of the API keeps BODY_LIMIT. */
const IMPORT_BODY_LIMIT = 4 * 1024 * 1024

/**
 * POST /api/users/import (docs/migrating.md): always present, superuser only. The route's own
 * validator checks the envelope; the lines are the import service's, which reports the schema's
 * rules and its own (hash format, bounds, duplicates) together, for every refused line at once.
 */
const userImportRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const { imports } = fastify.services

  fastify.post('/import', {
    schema: {
      tags: ['users'],
      summary: 'Import users with their existing password hashes',
      description: 'All or nothing (422 `validation_failed` naming `users.<index>.<field>`), or with `partial` the valid lines (200). `dry_run` answers exactly as the import would and writes nothing. Body limit 4 MiB.',
      security: [{ bearerAuth: [] }, { cookieAuth: [] }],
      body: ImportRequest,
      response: { 200: ref(ImportResult), ...errorResponses(400, 401, 403, 413, 415, 422) }
    },
    bodyLimit: IMPORT_BODY_LIMIT,
    validatorCompiler: (route) => {
      const compile = fastify.validatorCompiler
      if (compile === undefined) throw new Error('the validation plugin sets the validator compiler')
      return compile(route.httpPart === 'body' ? { ...route, schema: ImportEnvelope } : route)
    },
    config: { access: { superuser: true }, noStore: true }
  }, async (request) => {
    const { users, dry_run: dryRun = false, partial = false } = request.body
    const requester = { actorId: (request.claims as Claims).user_id, context: { ip: request.ip } }
    const outcome = await imports.run({ users, where: 'body', dryRun, partial, requester })
    if (outcome.refused > 0 && !partial) throw refusal(outcome.results)
    return {
      created: outcome.created,
      refused: outcome.refused,
      results: outcome.results.map((r) => ('id' in r ? r : { index: r.index, errors: r.errors }))
    }
  })
}

export default userImportRoutes
