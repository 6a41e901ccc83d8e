import { existsSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { bash, copyRepository, freePort, linkNodeModules, shellPath } from './repository-copy.js'

/**
 * The production install of docs/operations.md#running-it in a copy of the repository: build,
 * `npm prune --omit=dev`, then `node dist/src/start.cjs` in production with the first superuser
 * from ADMIN_EMAIL/ADMIN_PASSWORD — /health answers and that superuser signs in. A runtime import
 * of a devDependency fails here, since the pruned tree no longer has it.
 *
 * The install is this checkout's node_modules hard-linked (repository-copy.ts), which is what
 * `npm ci` made from the lockfile in .ci/run just before; a second `npm ci` here would spend
 * minutes of a 2-core machine (over 9 measured under load) to make the same tree. Everything after
 * it runs as documented. About a minute, most of it tsc.
 */
t.setTimeout(300_000)

const ADMIN = { email: 'root@example.com', password: 'Production-Pass-42' }

t.test('npm run build, npm prune --omit=dev, node dist/src/start.cjs: /health answers and ADMIN_EMAIL signs in', async (t) => {
  const dir = copyRepository(t)
  linkNodeModules(dir)
  const port = await freePort()
  const env = {
    PATH: shellPath(),
    HOME: process.env.HOME ?? '/tmp',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false'
  }
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
    DATA_DIR: join(dir, 'data'),
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
