import type { AnySchemaObject, KeywordDefinition, SchemaObjCxt } from 'ajv'

/** What the keyword asks; `src/breached-passwords/` answers (BreachedPasswords), or nothing when no list is set. */
export interface BreachedCheck { refuses (password: string): boolean }

/**
 * `notBreached: true` on a new password's schema (schemas/common.ts NewPassword): a password in
 * BREACHED_PASSWORDS_FILE fails it, reported as "The F field is a known breached password" beside
 * the request's other failing rules (docs/breached-passwords.md). It is looked up only once the
 * value passes the other rules of its own schema, so a field reports either its other failures or
 * this one, and the refusals counted are the ones reported. `list` is asked when a schema compiles
 * (the server's routes compile after the services exist); no list compiles to a keyword that
 * always passes.
 */
export function notBreached (list: () => BreachedCheck | undefined): KeywordDefinition {
  return {
    keyword: 'notBreached',
    type: 'string',
    schemaType: 'boolean',
    compile (enabled: boolean, parent: AnySchemaObject, it: SchemaObjCxt) {
      const check = enabled ? list() : undefined
      if (check === undefined) return () => true
      const { notBreached: _self, $id: _id, ...others } = parent
      const passesOthers = it.self.compile(others)
      return (data: string) => !passesOthers(data) || !check.refuses(data)
    },
    errors: false
  }
}
