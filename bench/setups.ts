import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { oidcEnv } from './oidc.js'
import type { ScenarioId, SetupId } from './options.js'
import type { RssTargets } from './report.js'

/**
 * The configurations gatehouse is measured in, each with its targets (docs/benchmarks.md):
 * SQLite in one process, PostgreSQL in one process, SQLite with WORKERS=2, and SQLite with the
 * sign-in pages on (docs/portal.md). A target
 * is the least acceptable req/s ratio to the ceiling.
 */
export interface Setup {
  id: SetupId
  title: string
  /** The scenarios it runs (of those asked for), each with its target or `undefined`. */
  targets: Partial<Record<ScenarioId, number | undefined>>
  /** The most RSS (MB, the whole process tree) the server may hold after start-up, reads and sign-ins */
  rssTargets?: RssTargets
  /** The setup's environment for the server; may create what it needs (a schema). */
  prepare (): Promise<NodeJS.ProcessEnv>
  /** Removes what prepare created; runs even after a failure. */
  cleanup (): Promise<void>
}

const RSS_TARGETS: RssTargets = { start: 100, reads: 120, login: 160 }
const nothing = async (): Promise<void> => {}

/** BENCH_DATABASE_URL points elsewhere; the schema goes into its search_path. */
const POSTGRES_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

function postgres (): Setup {
  const schema = `gatehouse_bench_${randomBytes(6).toString('hex')}`
  let created = false
  async function sql (statement: string): Promise<void> {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 })
    await client.connect()
    try {
      await client.query(statement)
    } finally {
      await client.end()
    }
  }
  return {
    id: 'postgres',
    title: 'PostgreSQL, one process',
    targets: { protected: 0.50, me: 0.50, login: 0.95, 'login-bcrypt': 0.90 },
    rssTargets: RSS_TARGETS,
    async prepare () {
      await sql(`CREATE SCHEMA ${schema}`)
      created = true
      const separator = POSTGRES_URL.includes('?') ? '&' : '?'
      return { DATABASE_URL: `${POSTGRES_URL}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}` }
    },
    async cleanup () {
      if (created) await sql(`DROP SCHEMA ${schema} CASCADE`)
      created = false
    }
  }
}

/**
 * SQLite with access tokens signed by a key pair: a protected route with the verified-token cache
 * on should cost what it costs under HS256 (the `sqlite` setup of the same run), within 5 %.
 */
function asymmetric (id: 'es256' | 'eddsa', alg: string): Setup {
  return {
    id,
    title: `SQLite, one process, JWT_ALG=${alg}`,
    targets: { protected: undefined, 'protected-p1': undefined },
    prepare: async () => ({ JWT_ALG: alg, DATA_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}` }),
    cleanup: nothing
  }
}

/** The sign-in pages and FORWARD_AUTH_REDIRECT on, as production needs them (https PUBLIC_URL, DATA_ENCRYPTION_KEYS). */
export function portalEnv (): NodeJS.ProcessEnv {
  return {
    ENABLE_PORTAL: 'true',
    FORWARD_AUTH_REDIRECT: 'true',
    // the sign-in page with its passkey form and script, as a portal with passkeys serves it
    ENABLE_PASSKEYS: 'true',
    PUBLIC_URL: 'https://auth.bench.example',
    DATA_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`
  }
}

/**
 * The OpenID Connect provider on (docs/oidc.md) beside the portal it needs, JWT_ALG=ES256: userinfo
 * is a read judged like /auth/me's neighbours (≥ 0.50 of bare), and /auth/me of the same process
 * is reported beside it (the same token check and user read, for a sign-in's access token); the code exchange
 * signs two tokens and writes a child session per request: reported.
 */
function oidc (): Setup {
  let dir: string | undefined
  return {
    id: 'oidc',
    title: 'SQLite, one process, the OpenID Connect provider (ENABLE_PORTAL, JWT_ALG=ES256)',
    targets: { me: undefined, 'oidc-userinfo': 0.50, 'userinfo-floor': undefined, 'oidc-code': undefined },
    async prepare () {
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-oidc-'))
      return { ...portalEnv(), ...oidcEnv(dir) }
    },
    async cleanup () {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
      dir = undefined
    }
  }
}

export function setupOf (id: SetupId): Setup {
  switch (id) {
    case 'sqlite':
      return {
        id,
        title: 'SQLite, one process',
        // verify: forward authentication; chain: nginx → gatehouse → bare against nginx → bare (reported);
        // peers: the hand-written comparison servers against bare (reported)
        targets: { protected: 0.60, 'protected-p1': 0.55, me: 0.60, 'me-p1': 0.55, login: 0.95, verify: 0.75, chain: undefined, peers: undefined, 'login-bcrypt': 0.90 },
        rssTargets: RSS_TARGETS,
        prepare: async () => ({}),
        cleanup: nothing
      }
    case 'postgres':
      return postgres()
    case 'es256':
      return asymmetric(id, 'ES256')
    case 'eddsa':
      return asymmetric(id, 'EdDSA')
    case 'oidc':
      return oidc()
    case 'portal':
      // the sign-in pages and FORWARD_AUTH_REDIRECT on, as a production portal runs them; verify-redirect
      // is judged by the same target as the sqlite setup's verify (a valid cookie never redirects)
      return {
        id,
        title: 'SQLite, one process, ENABLE_PORTAL and FORWARD_AUTH_REDIRECT on',
        targets: { 'portal-login': 0.50, 'verify-redirect': 0.75 },
        prepare: async () => portalEnv(),
        cleanup: nothing
      }
    case 'api-keys':
      // ENABLE_API_KEYS: the same routes with an API key as Bearer (docs/api-keys.md#speed), beside the
      // JWT rows of the same process; a key on verify at least 0.70 of the ceiling
      return {
        id,
        title: 'SQLite, one process, ENABLE_API_KEYS (a key as Bearer, and the access token beside it)',
        targets: { verify: 0.75, 'verify-key': 0.70, protected: 0.60, 'protected-key': undefined },
        prepare: async () => ({ ENABLE_API_KEYS: 'true', DATA_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}` }),
        cleanup: nothing
      }
    case 'workers':
      // WORKERS=2 on a 2-core machine against a one-process ceiling: reported, not judged
      return {
        id,
        title: 'SQLite, WORKERS=2 (CPU and RSS summed over the process tree)',
        targets: { protected: undefined, me: undefined, login: undefined },
        prepare: async () => ({ WORKERS: '2' }),
        cleanup: nothing
      }
  }
}
