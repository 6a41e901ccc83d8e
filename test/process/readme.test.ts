import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { bash, copyRepository, freePort, linkNodeModules, shellPath } from './repository-copy.js'

/**
 * README.md pasted as written: every ```sh block, in order, in one fresh bash (`set -euo pipefail`,
 * so any failing command fails the run) in a copy of the repository — `npm install`, `npm start`,
 * the first sign-in with the CLI, the login that keeps the token, `GET /auth/me`.
 *
 * What differs from a person at a terminal, and why it still proves the README:
 * - `npm start` holds its terminal; here it runs in the background (its output to server.log) and
 *   the next block waits for `GET /health`, as the person waits for "Server listening".
 * - node_modules is this checkout's, hard-linked (repository-copy.ts): the README's own
 *   `npm install` then runs on it as written and finds the lockfile's tree, where a full install
 *   would spend minutes of the 2-core machine on what .ci/run's `npm ci` has just done.
 * - port 3000 becomes a free port (PORT, and `:3000` in the commands), so a server another
 *   checkout runs on this machine cannot answer in its place; npm's audit and fund requests are
 *   off (they only report).
 * dist/ and data/ are not copied: the build, the development secret and the database are the
 * README's own. About 1–2 minutes, most of it the first build (tsc).
 */
t.setTimeout(420_000)

const FENCE = /^```sh\n([\s\S]*?)^```$/gm
const START = /^npm start\b/

/** The README's sh blocks as one script, with `npm start` run in the background until /health answers. */
function readmeScript (readme: string): { script: string, blocks: number } {
  const blocks = [...readme.matchAll(FENCE)].map((m) => m[1] ?? '')
  const parts = ['set -euo pipefail']
  blocks.forEach((block, i) => {
    parts.push(`echo '### block ${i + 1}'`)
    for (const line of block.replaceAll(':3000', ':$PORT').split('\n')) {
      if (!START.test(line)) { parts.push(line); continue }
      parts.push(
        `${line.replace(/#.*$/, '').trim()} > server.log 2>&1 &`,
        'server=$!',
        'until curl -sf "localhost:$PORT/health" > /dev/null; do',
        '  kill -0 "$server" 2> /dev/null || { echo "npm start exited"; cat server.log; exit 1; }',
        '  sleep 0.5',
        'done'
      )
    }
  })
  return { script: parts.join('\n'), blocks: blocks.length }
}

t.test('the README\'s shell blocks, run in order in a fresh shell against a fresh copy, sign in and read /auth/me', async (t) => {
  const dir = copyRepository(t)
  linkNodeModules(dir)
  const port = await freePort()
  const { script, blocks } = readmeScript(readFileSync(join(dir, 'README.md'), 'utf8'))
  t.ok(blocks >= 3, 'install and start, sign-in, me')
  const env = { PATH: shellPath(), HOME: process.env.HOME ?? '/tmp', PORT: String(port), npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' }
  const shell = bash(t, script, dir, env, 400_000)
  const run = await shell.done
  const log = () => { try { return readFileSync(join(dir, 'server.log'), 'utf8') } catch { return '' } }
  t.comment(`README run: ${run.ms} ms`)
  if (run.code !== 0) t.comment(`${run.output}\n--- server.log\n${log()}`)
  t.equal(run.code, 0, 'every block ran without an error')
  // the last block's output is GET /auth/me's answer
  const me = run.output.slice(run.output.lastIndexOf(`### block ${blocks}\n`)).split('\n').slice(1).join('\n')
  let body: unknown
  try { body = JSON.parse(me) } catch { body = me }
  t.match(body, { email: 'admin@example.com', name: 'Admin', roles: ['admin'], is_superuser: true }, 'GET /auth/me answered the user')
  shell.stop()
  // Ctrl-C: the server drains and logs its close
  await new Promise((resolve) => setTimeout(resolve, 2_000))
  t.match(log(), /"msg":"closing"/, 'Ctrl-C (SIGINT to the group) closes the server')
})

t.test('negative control: a block that fails stops the run, and an unset $ACCESS_TOKEN is refused', async (t) => {
  const dir = copyRepository(t)
  const readme = '```sh\nfalse\necho unreachable\n```\n'
  const { script } = readmeScript(readme)
  const run = await bash(t, script, dir, { PATH: shellPath() }, 10_000).done
  t.not(run.code, 0)
  t.notMatch(run.output, /unreachable/)
  // the README before the fix used $ACCESS_TOKEN without setting it: set -u refuses that
  const unset = await bash(t, readmeScript('```sh\necho "Bearer $ACCESS_TOKEN"\n```\n').script, dir, { PATH: shellPath() }, 10_000).done
  t.not(unset.code, 0)
  t.match(unset.output, /ACCESS_TOKEN: unbound variable/)
})
