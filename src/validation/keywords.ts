import { _, type KeywordDefinition } from 'ajv'
import { length } from './formats.js'

/** Keywords that JSON Schema lacks; each reports its parameter as `params.limit`/`params.prefix`. */
export const ruleKeywords: KeywordDefinition[] = [
  {
    // a present value: `null`, '' and only spaces count as absent. It also applies to null so
    // that `null` fails here (as `required`) whatever the schema's type.
    keyword: 'notBlank',
    type: ['string', 'null'],
    schemaType: 'boolean',
    validate: (enabled: boolean, data: string | null) => !enabled || (data !== null && data.trim().length > 0),
    errors: false
  },
  {
    keyword: 'len',
    type: ['string', 'array'],
    schemaType: 'number',
    validate: (n: number, data: string | unknown[]) => (typeof data === 'string' ? length(data) : data.length) === n,
    error: { message: 'must have the exact length', params: ({ schemaCode, data }) => _`{limit: ${schemaCode}, items: Array.isArray(${data})}` },
    errors: false
  },
  {
    keyword: 'startsWith',
    type: 'string',
    schemaType: 'string',
    validate: (prefix: string, data: string) => data.startsWith(prefix),
    error: { message: 'must start with the prefix', params: ({ schemaCode }) => _`{prefix: ${schemaCode}}` },
    errors: false
  }
]
