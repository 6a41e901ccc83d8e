import { register } from 'node:module'
import { isMainThread } from 'node:worker_threads'

/*
 * `--import=tsx` for the tests (node-arg in .taprc), plus a load hook that makes tap's coverage
 * report measure the TypeScript sources. tsx's inline source maps say `sourcesContent: [null]`
 * (it writes the text only when NODE_V8_COVERAGE is set), and the report (c8, v8-to-istanbul)
 * takes that null for the source itself: every file counted as one covered statement. Without
 * the field the report reads the source from the file the map names. The child processes the
 * tests start (test/process/server-process.ts) load this file too: tap records their coverage
 * as well, and one bad map of a file would stand for every process's.
 */

const MAP = '//# sourceMappingURL=data:application/json;base64,'
const PROJECT = new URL('..', import.meta.url).href

export async function load (url, context, nextLoad) {
  const result = await nextLoad(url, context)
  if (!url.startsWith(PROJECT) || url.includes('/node_modules/') || result.source == null) return result
  const source = String(result.source)
  const at = source.lastIndexOf(MAP)
  if (at === -1) return result
  const map = JSON.parse(Buffer.from(source.slice(at + MAP.length).trim(), 'base64').toString('utf8'))
  if (!map.sourcesContent?.every((text) => text == null)) return result
  delete map.sourcesContent
  return { ...result, source: source.slice(0, at) + MAP + Buffer.from(JSON.stringify(map)).toString('base64') + '\n' }
}

// this file is also the hooks module, loaded again in Node's hooks thread: register only once
if (isMainThread) {
  await import('tsx')
  register(import.meta.url)
}
