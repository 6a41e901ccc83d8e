import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { startServer, type LogLine } from './server-process.js'

/*
 * Real server processes for the whole-system suites (test/process/multi-instance.test.ts,
 * test/process/api-keys.test.ts, test/process/secret-scanner.test.ts): started with exactly the
 * environment given, spoken to over HTTP only. Imports nothing of the product, so a suite that must
 * not (the secret scanner's) can use it.
 */

export interface Teardown { teardown (fn: () => unknown): void }

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** A schema of the test's own in the test database, dropped at teardown; the URL selects it. */
export async function freshSchema (t: Teardown): Promise<string> {
  const schema = `gatehouse_multi_${randomUUID().replaceAll('-', '').slice(0, 12)}`
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await client.connect()
  await client.query(`create schema ${schema}`)
  await client.end()
  t.teardown(async () => {
    const dropper = new pg.Client({ connectionString: TEST_DATABASE_URL })
    await dropper.connect()
    await dropper.query(`drop schema ${schema} cascade`)
    await dropper.end()
  })
  return `${TEST_DATABASE_URL}${TEST_DATABASE_URL.includes('?') ? '&' : '?'}options=-c%20search_path%3D${schema}`
}

export interface Answer { status: number, headers: Headers, body: unknown }

export interface Instance {
  name: string
  origin: string
  call (method: string, path: string, options?: { body?: unknown, token?: string }): Promise<Answer>
  logs (): LogLine[]
}

/** The real server as a child process (src/server.ts through tsx), stopped with SIGTERM at teardown. */
export async function startInstance (t: Teardown, name: string, env: Record<string, string>): Promise<Instance> {
  const server = startServer(env)
  const { child } = server
  t.teardown(async () => {
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
    await server.exited
    clearTimeout(timer)
  })
  const logs = server.lines
  let base: string | undefined
  for (let waited = 0; base === undefined; waited += 50) {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${server.stderr()}`)
    if (waited > 30_000) throw new Error(`${name} did not start: ${server.stderr()}`)
    base = /^Server listening at (http:\/\/127\.0\.0\.1:\d+)$/.exec(logs().find((r) => r.msg.startsWith('Server listening at'))?.msg ?? '')?.[1]
    if (base === undefined) await sleep(50)
  }
  const origin = base
  // under-pressure answers 503 while the start-up's event-loop lag is still in its sample
  for (let waited = 0; (await fetch(`${origin}/health`)).status !== 200; waited += 100) {
    if (waited > 10_000) throw new Error(`${name} does not answer /health`)
    await sleep(100)
  }
  return {
    name,
    origin,
    logs,
    async call (method, path, { body, token } = {}) {
      const headers: Record<string, string> = {}
      if (body !== undefined) headers['content-type'] = 'application/json'
      if (token !== undefined) headers.authorization = `Bearer ${token}`
      const res = await fetch(origin + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
      const text = await res.text()
      return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) }
    }
  }
}
