import { importBcryptUsers, USER } from './client.js'
import { argon2Test, loadTest, type Load, type Sample, type Target } from './measure.js'
import type { NginxChain } from './nginx.js'
import { exchangeRun, userinfoRun } from './oidc.js'
import type { ScenarioId } from './options.js'
import type { Peers } from './peers.js'
import type { Argon2Child, Child } from './servers.js'

/** One measured row: a subject and the ceiling run just before it, at the same load. */
export interface Scenario {
  id: ScenarioId
  name: string
  ceilingName: string
  load: Load
  /** false for a comparison peer: its RSS is reported in its row, not judged as gatehouse's */
  gatehouse: boolean
  ceiling: (load: Load) => Promise<Sample>
  /** `token`: a fresh gatehouse access token for the round */
  subject: (load: Load, token: string) => Promise<Sample>
}

/** What a setup's scenarios run against; nginx and the peers only when their scenario is asked for. */
export interface Servers {
  gatehouse: Child
  bare: Child
  argon2: Argon2Child
  nginx: NginxChain | undefined
  peers: Peers | undefined
  /** userinfo's floor and its token (bench/userinfo-floor.ts) */
  userinfoFloor: { child: Child, token: string } | undefined
}

const bearer = (token: string): Target['headers'] => ({ authorization: `Bearer ${token}` })
const hello: Target = { path: '/' }
const login: Target = { path: '/auth/login', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: USER.email, password: USER.password }) }

/** Every scenario, in the order they run; `userId` is the signed-in gatehouse user. */
export function scenarios ({ gatehouse, bare, argon2, nginx, peers, userinfoFloor }: Servers, userId: string, seconds: number, apiKey = ''): Scenario[] {
  const p10 = { connections: 50, pipelining: 10, seconds }
  const p1 = { connections: 50, pipelining: 1, seconds }
  const helloCeiling = (load: Load) => loadTest(bare, hello, load)
  const self = (load: Load, token: string) => loadTest(gatehouse, { path: `/api/users/${userId}`, headers: bearer(token) }, load)
  const me = (load: Load, token: string) => loadTest(gatehouse, { path: '/auth/me', headers: bearer(token) }, load)
  const chain: Scenario[] = nginx === undefined
    ? []
    : [{
        id: 'chain',
        name: 'nginx → GET /auth/verify → bare hello',
        ceilingName: 'nginx → bare hello',
        load: p1,
        gatehouse: true,
        ceiling: (load) => loadTest(nginx.plain, hello, load),
        subject: (load, token) => loadTest(nginx.chain, { path: '/', headers: bearer(token) }, load)
      }]
  // the same read as /api/users/:id (self), hand-written: what gatehouse costs over a minimal server
  const peer = (name: string, child: Child, token: string, id: string): Scenario => ({
    id: 'peers',
    name: `peer: ${name}, GET /users/:id`,
    ceilingName: 'bare hello',
    load: p10,
    gatehouse: false,
    ceiling: helloCeiling,
    subject: (load) => loadTest(child, { path: `/users/${id}`, headers: bearer(token) }, load)
  })
  const peerRows = peers === undefined
    ? []
    : [
        peer('Fastify + @fastify/jwt + better-sqlite3', peers.fastify, peers.token, peers.userId),
        peer('Express 5 + passport-jwt + better-sqlite3', peers.express, peers.token, peers.userId)
      ]
  // every request signs in a user imported with a bcrypt hash for the first time: verify + rehash
  const bcryptLogin = async (load: Load) => {
    const emails = await importBcryptUsers(gatehouse, 100 * load.seconds + 500)
    let next = 0
    return await loadTest(gatehouse, { ...login, nextBody: () => JSON.stringify({ email: emails[next++ % emails.length], password: USER.password }) }, load)
  }
  const bcryptRow = (kind: 'bcrypt' | 'bcrypt-rehash', ceilingName: string): Scenario => ({
    id: 'login-bcrypt', name: 'POST /auth/login, imported bcrypt cost 10 (first sign-in)', ceilingName, load: p1, gatehouse: true, ceiling: (load) => argon2Test(argon2, load, kind), subject: bcryptLogin
  })
  return [
    ...chain,
    {
      id: 'verify',
      name: 'GET /auth/verify',
      ceilingName: 'bare hello',
      load: p10,
      gatehouse: true,
      ceiling: helloCeiling,
      subject: (load, token) => loadTest(gatehouse, { path: '/auth/verify', headers: bearer(token) }, load)
    },
    {
      // the same forward authentication with an API key (ENABLE_API_KEYS), checked from memory
      id: 'verify-key',
      name: 'GET /auth/verify, API key',
      ceilingName: 'bare hello',
      load: p10,
      gatehouse: true,
      ceiling: helloCeiling,
      subject: (load) => loadTest(gatehouse, { path: '/auth/verify', headers: bearer(apiKey) }, load)
    },
    { id: 'protected-key', name: 'GET /api/users/:id (self), API key', ceilingName: 'bare hello', load: p10, gatehouse: true, ceiling: helloCeiling, subject: (load) => self(load, apiKey) },
    { id: 'protected', name: 'GET /api/users/:id (self)', ceilingName: 'bare hello', load: p10, gatehouse: true, ceiling: helloCeiling, subject: self },
    { id: 'protected-p1', name: 'GET /api/users/:id (self)', ceilingName: 'bare hello', load: p1, gatehouse: true, ceiling: helloCeiling, subject: self },
    { id: 'me', name: 'GET /auth/me', ceilingName: 'bare hello', load: p10, gatehouse: true, ceiling: helloCeiling, subject: me },
    { id: 'me-p1', name: 'GET /auth/me', ceilingName: 'bare hello', load: p1, gatehouse: true, ceiling: helloCeiling, subject: me },
    ...peerRows,
    {
      // the sign-in page as a first visit sees it: no cookie, so each answer renders the page and mints a CSRF cookie
      id: 'portal-login',
      name: 'GET /portal/login (page + CSRF cookie)',
      ceilingName: 'bare hello',
      load: p10,
      gatehouse: true,
      ceiling: helloCeiling,
      subject: (load) => loadTest(gatehouse, { path: '/portal/login', headers: { accept: 'text/html', 'sec-fetch-mode': 'navigate' } }, load)
    },
    {
      // a browser navigation the proxy asks about, signed in by the portal's access_token cookie
      id: 'verify-redirect',
      name: 'GET /auth/verify, FORWARD_AUTH_REDIRECT, cookie',
      ceilingName: 'bare hello',
      load: p10,
      gatehouse: true,
      ceiling: helloCeiling,
      subject: (load, token) => loadTest(gatehouse, { path: '/auth/verify', headers: { cookie: `access_token=${token}`, accept: 'text/html', 'sec-fetch-mode': 'navigate' } }, load)
    },
    {
      // an OIDC access token (RFC 9068) of a portal sign-in, as a relying party calls it
      id: 'oidc-userinfo',
      name: 'GET /oauth2/userinfo',
      ceilingName: 'bare hello',
      load: p10,
      gatehouse: true,
      ceiling: helloCeiling,
      subject: (load) => userinfoRun(gatehouse, load)
    },
    ...(userinfoFloor === undefined
      ? []
      : [{
          // what userinfo must do, hand-written with nothing else around it: how far gatehouse's own plumbing is from it
          id: 'userinfo-floor' as const,
          name: 'floor: bare Fastify + userinfo\'s work, GET /userinfo',
          ceilingName: 'bare hello',
          load: p10,
          gatehouse: false,
          ceiling: helloCeiling,
          subject: async (load: Load) => await loadTest(userinfoFloor.child, { path: '/userinfo', headers: bearer(userinfoFloor.token) }, load)
        }]),
    {
      // each request redeems a fresh code (bench/oidc.ts mints the pool): a run of CODE_POOL requests
      id: 'oidc-code',
      name: 'POST /oauth2/token (authorization_code)',
      ceilingName: 'bare hello',
      load: { connections: 10, pipelining: 1, seconds },
      gatehouse: true,
      ceiling: helloCeiling,
      subject: (load) => exchangeRun(gatehouse, load)
    },
    {
      id: 'login',
      name: 'POST /auth/login',
      ceilingName: 'argon2 verify, 50 concurrent',
      load: p1,
      gatehouse: true,
      ceiling: (load) => argon2Test(argon2, load),
      subject: (load) => loadTest(gatehouse, login, load)
    },
    bcryptRow('bcrypt', 'bcrypt.compare, 50 concurrent'),
    bcryptRow('bcrypt-rehash', 'bcrypt.compare + argon2id hash, 50 concurrent')
  ]
}
