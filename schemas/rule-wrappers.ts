import { Type, type ArrayOptions, type Static, type TArray, type TSchema, type TUnsafe } from '@sinclair/typebox'

/*
 * TypeBox wrappers for the validation rules that are more than one keyword. They only build
 * schemas: the formats and keywords they name, and the messages, are the rule library's
 * (src/validation/).
 */

/** `required`: present, not null, not '' or only spaces (the parent object lists it as required). */
export function required<T extends TSchema> (schema: T): T {
  return { ...schema, notBlank: true }
}

/** What "empty" means per type, for omitempty: a string's zero value and an array's. */
const EMPTY: Record<string, TSchema> = {
  string: Type.Literal(''),
  array: Type.Array(Type.Unknown(), { maxItems: 0 })
}

/**
 * `omitempty`: an empty value ('' for a string, [] for an array) is accepted as is and every
 * other rule applies to any other value; null is not empty (it fails the type). The wrapper is
 * an if/else whose own `if` failure is never reported (the rule library maps it to nothing).
 */
export function omitEmpty<T extends TSchema> (schema: T): TUnsafe<Static<T>> {
  const empty = EMPTY[String(schema.type)]
  if (empty === undefined) throw new TypeError(`omitEmpty applies to strings and arrays, not ${String(schema.type)}`)
  return Type.Unsafe<Static<T>>({ if: empty, then: true, else: schema })
}

/** `dive`: the item's rules on each element, reported at `field.index`; arrays are always bounded. */
export function dive<T extends TSchema> (item: T, options: ArrayOptions & { maxItems: number }): TArray<T> {
  return Type.Array(item, options)
}
