import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createUser, signIn, USER } from './client.js'
import { loadTest, type Target } from './measure.js'
import { oidcAccessToken, oidcEnv } from './oidc.js'
import { startBare, startGatehouse, stop, stopAll, type Child } from './servers.js'
import { portalEnv } from './setups.js'

/**
 * `npm run bench:profile -- <path> [seconds] [pipelining]`: one server under autocannon with
 * `node --cpu-prof`, and where its CPU went, per request: the functions and the packages with the
 * most self time, and the functions with the most time including their callees. `<path>` is a
 * gatehouse path (`/auth/me`, `/auth/verify`, `/api/users/self` for the signed-in user's own
 * record, `/portal/login` with the sign-in pages on and no cookie, as a first visit,
 * `/oauth2/userinfo` with an OIDC access token in the `oidc` setup's server), `login` (POST
 * /auth/login; the profile is the main thread's, argon2 hashes on libuv's pool) or `bare` for the
 * bare ceiling. OIDC=1 runs any other path in the `oidc` setup's server too, to compare in one setup. The profile is kept for a flame graph (Chrome DevTools,
 * speedscope). Not part of `npm test`.
 */
interface CallFrame { functionName: string, url: string, lineNumber: number }
interface ProfileNode { id: number, callFrame: CallFrame, hitCount?: number, children?: number[] }
interface Profile { nodes: ProfileNode[], startTime: number, endTime: number, samples: number[] }

const [path = '/api/users/self', secondsArg = '10', pipeliningArg = '10'] = process.argv.slice(2)
const seconds = Number(secondsArg)
const pipelining = Number(pipeliningArg)
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-profile-'))
const profileDir = join(dir, 'profile')
const nodeArgs = ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]

function where (frame: CallFrame): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(frame.url)
  if (pkg?.[1] !== undefined) return pkg[1]
  if (frame.url.startsWith('node:')) return 'node'
  if (frame.url === '') return frame.functionName.startsWith('(') ? frame.functionName : 'native'
  return frame.url.replace(/^.*\/dist\//, '')
}

function label (frame: CallFrame): string {
  const file = frame.url.replace(/^.*\/(node_modules|dist)\//, '')
  return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`
}

function top (totals: Map<string, number>, requests: number, count: number): string {
  return [...totals].sort((a, b) => b[1] - a[1]).slice(0, count)
    .map(([name, us]) => `${(us / requests).toFixed(2).padStart(7)} µs  ${name}`).join('\n')
}

/** Self and inclusive time by function, self time by package: µs per request. */
function summarize (profile: Profile, requests: number): string {
  const interval = (profile.endTime - profile.startTime) / profile.samples.length
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const self = new Map<string, number>()
  const packages = new Map<string, number>()
  const inclusive = new Map<string, number>()
  const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us)
  // inclusive time: each function counted once per stack it appears in (recursion not doubled)
  const walk = (node: ProfileNode, onStack: Set<string>): number => {
    let total = (node.hitCount ?? 0) * interval
    const name = label(node.callFrame)
    add(self, name, total)
    add(packages, where(node.callFrame), total)
    const fresh = !onStack.has(name)
    if (fresh) onStack.add(name)
    for (const child of node.children ?? []) {
      const found = byId.get(child)
      if (found !== undefined) total += walk(found, onStack)
    }
    if (fresh) {
      onStack.delete(name)
      add(inclusive, name, total)
    }
    return total
  }
  const root = profile.nodes[0]
  if (root !== undefined) walk(root, new Set())
  for (const idle of ['(idle) :0', '(root) :0', '(program) :0']) inclusive.delete(idle)
  return [
    `self time by package (µs per request, ${requests} requests):`, top(packages, requests, 15), '',
    'self time by function:', top(self, requests, 30), '',
    'time including callees:', top(inclusive, requests, 40)
  ].join('\n')
}

async function server (): Promise<{ child: Child, target: Target }> {
  if (path === 'bare') return { child: await startBare(dir, nodeArgs), target: { path: '/' } }
  const portal = path.startsWith('/portal/')
  const oidc = path === '/oauth2/userinfo' || process.env.OIDC === '1'
  const env = oidc ? { ...portalEnv(), ...oidcEnv(dir) } : portal ? portalEnv() : {}
  const child = await startGatehouse(dir, 'gatehouse', env, nodeArgs)
  await createUser(child)
  if (path === '/oauth2/userinfo') return { child, target: { path, headers: { authorization: `Bearer ${await oidcAccessToken(child)}` } } }
  if (path === 'login') {
    const body = JSON.stringify({ email: USER.email, password: USER.password })
    return { child, target: { path: '/auth/login', method: 'POST', headers: { 'content-type': 'application/json' }, body } }
  }
  if (portal) return { child, target: { path, headers: { accept: 'text/html', 'sec-fetch-mode': 'navigate' } } }
  const user = await signIn(child, USER)
  return { child, target: { path: path.replace('/self', `/${user.id}`), headers: { authorization: `Bearer ${user.token}` } } }
}

try {
  const { child, target } = await server()
  const warm = await loadTest(child, target, { connections: 50, pipelining: 1, seconds: 2 })
  const sample = await loadTest(child, target, { connections: 50, pipelining, seconds })
  await stop(child.process)
  const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'))
  if (file === undefined) throw new Error('no profile was written')
  const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as Profile
  process.stdout.write(`${path}: ${Math.round(sample.rps)} req/s, ${sample.cpuUs.toFixed(1)} µs CPU per request, ${sample.bad} bad\n`)
  process.stdout.write(summarize(profile, sample.requests + warm.requests) + '\n')
  process.stdout.write(`profile: ${join(profileDir, file)}\n`)
} finally {
  await stopAll()
  // KEEP_PROFILE=1 keeps the .cpuprofile for a flame graph
  if (process.env.KEEP_PROFILE === undefined) rmSync(dir, { recursive: true, force: true })
}
