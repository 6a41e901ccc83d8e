import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { tempDir } from '../helper.js'
import { bash, copyRepository, freePort, linkNodeModules, shellPath } from './repository-copy.js'

/**
 * The two installs the documentation gives, each run as written, one after the other in one copy
 * of the repository (repository-copy.ts), so that the copy and the first `tsc` build are made once:
 *
 * 1. README.md pasted as written: every ```sh block, in order, in one fresh bash (`set -euo pipefail`,
 *    so any failing command fails the run) — `npm install`, `npm start`, the first sign-in with the
 *    CLI, the login that keeps the token, `GET /auth/me`.
 * 2. Then the production install of docs/operations.md#running-it in the same copy: `npm run build`,
 *    `npm prune --omit=dev`, then `node dist/src/start.cjs` in production with the first superuser
 *    from ADMIN_EMAIL/ADMIN_PASSWORD — /health answers and that superuser signs in. A runtime import
 *    of a devDependency fails here, since the pruned tree no longer has it. Its `npm run build` is
 *    the documented command, run again: tsc's incremental build finds dist/ up to date from the
 *    README's `npm start` (whose prestart ran the same `npm run build` here), so it costs a few
 *    seconds instead of a second full build; should the README run have stopped before its build,
 *    this one builds everything. Its data folder is a fresh one, not the README's ./data.
 *
 * What differs from a person at a terminal, and why it still proves the documents:
 * - `npm start` holds its terminal; here it runs in the background (its output to server.log) and
 *   the next block waits for `GET /health`, as the person waits for "Server listening".
 * - node_modules is this checkout's, hard-linked (repository-copy.ts): the README's own
 *   `npm install` then runs on it as written and finds the lockfile's tree, where a full install
 *   would spend minutes of the 2-core machine on what .ci/run's `npm ci` has just done; it also
 *   stands for the production install's `npm ci` (a second `npm ci` measured over 9 minutes under
 *   load, to make the same tree).
 * - port 3000 becomes a free port (PORT, and `:3000` in the commands), so a server another
 *   checkout runs on this machine cannot answer in its place; npm's audit and fund requests are
 *   off (they only report).
 * dist/ and data/ are not copied: the build, the development secret and the database are the
 * README's own. About 1–2 minutes in all, most of it the README's build (tsc).
 */
t.setTimeout(600_000)

const FENCE = /^```sh\n([\s\S]*?)^```$/gm
const START = /^npm start\b/
const ADMIN = { email: 'root@example.com', password: 'Production-Pass-42' }
const NPM_QUIET = { npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' }

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

/** The copy both installs run in, with this checkout's node_modules hard-linked; removed at the end of the file. */
const dir = copyRepository(t)
linkNodeModules(dir)

t.test('the README\'s shell blocks, run in order in a fresh shell against a fresh copy, sign in and read /auth/me', async (t) => {
  const port = await freePort()
  const { script, blocks } = readmeScript(readFileSync(join(dir, 'README.md'), 'utf8'))
  t.ok(blocks >= 3, 'install and start, sign-in, me')
  const env = { PATH: shellPath(), HOME: process.env.HOME ?? '/tmp', PORT: String(port), ...NPM_QUIET }
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
  for (const deadline = Date.now() + 10_000; !/"msg":"closing"/.test(log()) && Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.match(log(), /"msg":"closing"/, 'Ctrl-C (SIGINT to the group) closes the server')
})

t.test('then, in the same copy: npm run build, npm prune --omit=dev, node dist/src/start.cjs: /health answers and ADMIN_EMAIL signs in', async (t) => {
  const port = await freePort()
  const env = { PATH: shellPath(), HOME: process.env.HOME ?? '/tmp', ...NPM_QUIET }
  const install = await bash(t, 'set -euo pipefail\nnpm run build\nnpm prune --omit=dev', dir, env, 280_000).done
  t.comment(`build and prune: ${install.ms} ms`)
  if (install.code !== 0) t.comment(install.output)
  t.equal(install.code, 0, 'npm run build && npm prune --omit=dev')
  for (const tool of ['typescript', 'tap', 'eslint', 'tsx']) t.notOk(existsSync(join(dir, 'node_modules', tool)), `${tool} is pruned`)

  const server = bash(t, 'exec node dist/src/start.cjs', dir, {
    ...env,
    APP_ENV: 'production',
    JWT_SECRET: 'Kq3w-Zt1_vB7xW2mN8pL4sR6dF0hJ5cY9eT2uI8oP0aS',
    PORT: String(port),
    DATA_DIR: tempDir(t),
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password
  }, 120_000)
  const base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  let health: Response | undefined
  while (health === undefined && Date.now() < deadline) {
    health = await fetch(`${base}/health`).catch(async () => { await new Promise((resolve) => setTimeout(resolve, 250)); return undefined })
  }
  t.equal(health?.status, 200, '/health')
  const login = await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })
  t.equal(login.status, 200, 'the ADMIN_EMAIL superuser signs in')
  const { access_token: token } = await login.json() as { access_token: string }
  const me = await fetch(`${base}/auth/me`, { headers: { authorization: `Bearer ${token}` } })
  t.match(await me.json(), { email: ADMIN.email, is_superuser: true })
  server.stop()
  const stopped = await server.done
  t.equal(stopped.code, 0, 'SIGINT drains it and it exits 0')
  t.notMatch(stopped.output, /ERR_MODULE_NOT_FOUND|Cannot find (module|package)/, 'no import of a pruned package')
})

t.test('negative control: a block that fails stops the run, and an unset $ACCESS_TOKEN is refused', async (t) => {
  const scratch = tempDir(t)
  const readme = '```sh\nfalse\necho unreachable\n```\n'
  const { script } = readmeScript(readme)
  const run = await bash(t, script, scratch, { PATH: shellPath() }, 10_000).done
  t.not(run.code, 0)
  t.notMatch(run.output, /unreachable/)
  // the README before the fix used $ACCESS_TOKEN without setting it: set -u refuses that
  const unset = await bash(t, readmeScript('```sh\necho "Bearer $ACCESS_TOKEN"\n```\n').script, scratch, { PATH: shellPath() }, 10_000).done
  t.not(unset.code, 0)
  t.match(unset.output, /ACCESS_TOKEN: unbound variable/)
})
