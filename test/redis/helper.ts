import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { createServer, Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import type { TestContext } from '../helper.js'

/** The machine's shared Redis (never stopped by a test); CI points TEST_REDIS_URL elsewhere. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/** A key prefix of its own per call, so test files running at once never share counters. */
export function uniquePrefix (t: TestContext): string {
  const prefix = `gatehouse-test-${randomUUID().slice(0, 8)}:`
  t.teardown(async () => {
    const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0 })
    try {
      await redis.connect()
      const keys = await redis.keys(`${prefix}*`)
      if (keys.length > 0) await redis.del(...keys)
    } finally {
      redis.disconnect()
    }
  })
  return prefix
}

export async function freePort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  server.close()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

async function accepts (port: number): Promise<boolean> {
  const socket = new Socket()
  try {
    socket.connect(port, '127.0.0.1')
    await once(socket, 'connect')
    return true
  } catch {
    return false
  } finally {
    socket.destroy()
  }
}

/**
 * A redis-server of the test's own, with nothing persisted, that the test may stop and start
 * again on the same port (the machine's shared Redis must never be stopped).
 */
export class PrivateRedis {
  private process: ChildProcess | undefined

  private constructor (readonly port: number) {}

  static async start (t: TestContext): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort())
    t.teardown(() => redis.stop())
    await redis.start()
    return redis
  }

  get url (): string {
    return `redis://127.0.0.1:${this.port}`
  }

  async start (): Promise<void> {
    this.process = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
    for (let i = 0; i < 100; i++) {
      if (await accepts(this.port)) return
      await sleep(50)
    }
    throw new Error(`redis-server did not start on port ${this.port}`)
  }

  /** Freezes the server (SIGSTOP): connections stay open and nothing answers, as with a hung Redis. */
  pause (): void {
    this.process?.kill('SIGSTOP')
  }

  resume (): void {
    this.process?.kill('SIGCONT')
  }

  async stop (): Promise<void> {
    const child = this.process
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
    this.process = undefined
    const exited = once(child, 'exit')
    child.kill('SIGKILL')
    await exited
  }
}
