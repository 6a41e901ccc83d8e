import type { ErrorObject } from 'ajv'
import { ValidationFailed, type ValidationDetail } from '../errors.js'
import { MESSAGES, ruleOf } from './messages.js'

const PASSWORD_FIELD = /password/i
const PASSWORD_FORMAT = /password/
const MAX_VALUE = 256

interface SchemaNode {
  properties?: Record<string, SchemaNode>
  required?: string[]
  items?: SchemaNode
  else?: SchemaNode
  anyOf?: SchemaNode[]
  oneOf?: SchemaNode[]
  format?: string
  errorMessage?: unknown
}
interface Failure { tag: string, message: string }
interface Place { node?: SchemaNode, rank: number[], required: boolean }
interface Field extends Place { name: string, path: string[], failures: Failure[] }

function pathOf (error: ErrorObject, schema: SchemaNode | undefined): string[] {
  const path = error.instancePath.split('/').slice(1).map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
  const named = error.keyword === 'errorMessage' ? replacedRequired(error, locate(schema, path).node) : error
  const missing = named?.params.missingProperty ?? named?.params.additionalProperty
  if (typeof missing === 'string') path.push(missing)
  return path
}

/** An override for `required` is written on the object but is about the missing property. */
function replacedRequired (error: ErrorObject, node: SchemaNode | undefined): ErrorObject | undefined {
  const [replaced] = error.params.errors as ErrorObject[]
  const message = node?.errorMessage
  const forRequired = typeof message === 'object' && message !== null && 'required' in message
  return forRequired && replaced?.keyword === 'required' ? replaced : undefined
}

const IN_ONE_OF = /\/oneOf\/\d+\//

/** A `oneOf` of branches that each require properties is reported under each of them. */
function pathsOf (error: ErrorObject, schema: SchemaNode | undefined): string[][] {
  const path = pathOf(error, schema)
  const replaced = error.keyword === 'errorMessage' ? (error.params.errors as ErrorObject[])[0] : error
  if (replaced?.keyword !== 'oneOf') return [path]
  const branches = locate(schema, path).node?.oneOf ?? []
  const named = branches.flatMap((branch) => branch.required ?? [])
  return branches.every((branch) => (branch.required ?? []).length > 0) ? named.map((name) => [...path, name]) : [path]
}

function childOf (node: SchemaNode | undefined, key: string): { node?: SchemaNode, rank: number, required: boolean } {
  if (node === undefined) return { rank: Infinity, required: false }
  const keys = node.properties === undefined ? [] : Object.keys(node.properties)
  if (keys.includes(key)) return { node: node.properties?.[key], rank: keys.indexOf(key), required: node.required?.includes(key) ?? false }
  if (node.items !== undefined && /^\d+$/.test(key)) return { node: node.items, rank: Number(key), required: false }
  for (const branch of [node.else, ...(node.anyOf ?? [])]) {
    const found = childOf(branch, key)
    if (found.node !== undefined) return found
  }
  return { rank: Infinity, required: false }
}

function locate (schema: SchemaNode | undefined, path: string[]): Place {
  let node = schema
  let required = false
  const rank: number[] = []
  for (const key of path) {
    const child = childOf(node, key)
    rank.push(child.rank)
    node = child.node
    required = child.required
  }
  return { node, rank, required }
}

function compareRanks (a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return (a[i] ?? 0) < (b[i] ?? 0) ? -1 : 1
  }
  return a.length - b.length
}

function valueAt (data: unknown, path: string[]): unknown {
  let value = data
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined
    value = (value as Record<string, unknown>)[key]
  }
  return value
}

/** Any property named like a password is blanked. */
function stringify (value: unknown): string {
  if (value === undefined) return ''
  const text = typeof value === 'string' ? value : JSON.stringify(value, (key, v: unknown) => (PASSWORD_FIELD.test(key) ? '' : v))
  return text.length > MAX_VALUE ? Array.from(text.slice(0, 2 * MAX_VALUE)).slice(0, MAX_VALUE).join('') : text
}

export interface FailedPart {
  context: string
  data: unknown
  withDetails: boolean
  schema?: unknown
}

/**
 * Ajv's errors → the 422 body (docs/api.md), in the schema's order. An absent or blank required
 * value reports only `required`: the other rules have nothing to say about a missing value.
 */
export function toValidationFailed (errors: ErrorObject[], { context, data, withDetails, schema }: FailedPart): ValidationFailed {
  const fields = new Map<string, Field>()
  for (const error of errors.filter((e) => !IN_ONE_OF.test(e.schemaPath))) {
    for (const path of pathsOf(error, schema as SchemaNode | undefined)) addFailure(fields, error, path, { context, data, schema })
  }
  return answer(fields, data, withDetails)
}

function addFailure (fields: Map<string, Field>, error: ErrorObject, path: string[], { context, data, schema }: Omit<FailedPart, 'withDetails'>): void {
  const name = path.length > 0 ? path.join('.') : context
  const field = fields.get(name) ?? { name, path, failures: [], ...locate(schema as SchemaNode | undefined, path) }
  const rule = ruleOf(error, { value: valueAt(data, path), required: field.required })
  if (rule === null) return
  const template = MESSAGES[rule.template] ?? MESSAGES.invalid ?? ''
  const message = rule.message ?? template.replace(/\b[FP]\b/g, (k) => (k === 'F' ? name : String(rule.param)))
  if (!field.failures.some((f) => f.message === message)) field.failures.push({ tag: rule.tag, message })
  fields.set(name, field)
}

function answer (fields: Map<string, Field>, data: unknown, withDetails: boolean): ValidationFailed {
  const sorted = [...fields.values()].sort((a, b) => compareRanks(a.rank, b.rank))

  const result: Record<string, string[]> = {}
  const details: ValidationDetail[] = []
  for (const field of sorted) {
    const { node } = field
    const required = field.failures.find((f) => f.tag === 'required')
    const kept = required ? [required] : field.failures
    result[field.name] = kept.map((f) => f.message)
    if (!withDetails) continue
    const secret = PASSWORD_FIELD.test(field.name) || PASSWORD_FORMAT.test(node?.format ?? node?.else?.format ?? '')
    const value = secret ? '' : stringify(valueAt(data, field.path))
    for (const f of kept) details.push({ field: field.name, tag: f.tag, value, message: f.message })
  }
  return new ValidationFailed(result, withDetails ? details : undefined)
}
