import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import sjson from 'secure-json-parse'
import { InvalidJson, UnsupportedMediaType } from '../src/errors.js'

const utf8 = new TextDecoder('utf-8', { fatal: true })
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)/i
/** A `\uD800`-`\uDFFF` escape in the text: only then can a parsed string hold a lone surrogate. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/
/** In `u` mode a well-formed pair is one code point, so this matches unpaired halves only. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u

/**
 * No schema nests anywhere near this deep. A deeper body is refused before parsing: the
 * recursive steps after the parser (the reviver, Ajv, the 422 `details` serializer) would
 * otherwise overflow the stack on `[[[[…]]]]` and turn a client's body into a 500.
 */
const MAX_DEPTH = 32

/** True when arrays/objects nest deeper than `max` outside strings (one pass, no parse). */
function nestsDeeperThan (text: string, max: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // a backslash escapes the next character, a quote included
      else if (c === 0x22) inString = false
    } else if (c === 0x22) {
      inString = true
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true
    } else if (c === 0x5d || c === 0x7d) {
      depth--
    }
  }
  return false
}

/**
 * An escaped unpaired surrogate (`"\ud800"`) is valid JSON text but no Unicode character: stored
 * through UTF-8 it would silently become U+FFFD, so a name or password would not be what was sent.
 */
function refuseLoneSurrogates (key: string, value: unknown): unknown {
  if (LONE_SURROGATE.test(key) || (typeof value === 'string' && LONE_SURROGATE.test(value))) {
    throw new SyntaxError('The request body contains an unpaired surrogate escape')
  }
  return value
}

/**
 * The only body parser: application/json in UTF-8. Fastify's text/plain parser is removed, so
 * an HTML form cannot post to any route (415). Invalid UTF-8 and `__proto__`/`constructor`
 * keys are refused, and the parser's own detail is returned (docs/api.md#errors).
 *
 * Duplicate keys: the last one wins (`{"email":"a","email":"b"}` is `{"email":"b"}`), as
 * JSON.parse (ECMA-262) and most JSON libraries do. The whole body is then validated as that
 * one object, so no field reaches a handler unchecked whichever copy a proxy in front looked at.
 */
export default fp(async function jsonBodyPlugin (fastify: FastifyInstance) {
  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1]
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
      done(new UnsupportedMediaType(), undefined)
      return
    }
    if (body.length === 0) {
      done(new InvalidJson('The request body is empty'), undefined)
      return
    }
    let text: string
    try {
      text = utf8.decode(body)
    } catch {
      done(new InvalidJson('The request body is not valid UTF-8'), undefined)
      return
    }
    if (nestsDeeperThan(text, MAX_DEPTH)) {
      done(new InvalidJson(`The request body is nested deeper than ${MAX_DEPTH} levels`), undefined)
      return
    }
    let parsed: unknown
    try {
      const reviver = SURROGATE_ESCAPE.test(text) ? refuseLoneSurrogates : undefined
      parsed = sjson.parse(text, reviver, { protoAction: 'error', constructorAction: 'error' })
    } catch (err) {
      done(new InvalidJson((err as Error).message), undefined)
      return
    }
    done(null, parsed)
  })
}, { name: 'json-body' })
