import { Agent, request } from 'node:http'

/** One answer: status, parsed JSON body (undefined when empty) and the round trip in ms. */
export interface Reply { status: number, body: unknown, ms: number }

export interface Send { token?: string, body?: unknown }

const TIMEOUT_MS = 10_000

/**
 * One virtual client: its own keep-alive connection, as a browser tab or a backend keeps one.
 * node:http rather than fetch: the load generator shares the box with the server, and its
 * cost per request is part of what every latency includes.
 */
export class SoakClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1 })

  constructor (private readonly base: URL) {}

  async send (method: string, path: string, { token, body }: Send = {}): Promise<Reply> {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const headers: Record<string, string> = {}
    if (token !== undefined) headers.authorization = `Bearer ${token}`
    if (payload !== undefined) {
      headers['content-type'] = 'application/json'
      headers['content-length'] = String(Buffer.byteLength(payload))
    }
    const start = performance.now()
    return await new Promise((resolve, reject) => {
      const req = request(new URL(path, this.base), { method, headers, agent: this.agent, timeout: TIMEOUT_MS }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.once('error', reject)
        res.once('end', () => {
          const ms = performance.now() - start
          const text = Buffer.concat(chunks).toString('utf8')
          try {
            resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text), ms })
          } catch {
            reject(new Error(`${method} ${path}: ${res.statusCode} with a body that is not JSON: ${text.slice(0, 120)}`))
          }
        })
      })
      req.once('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${TIMEOUT_MS} ms`)))
      req.once('error', reject)
      req.end(payload)
    })
  }

  close (): void {
    this.agent.destroy()
  }
}
