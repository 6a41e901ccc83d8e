import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'

/*
 * What the proxy suites share: the configurations of docs/proxies.md read out of the document, and
 * the real Debian nginx and Caddy run as child processes of the test on free 127.0.0.1 ports.
 */

const NGINX = process.env.NGINX_PATH ?? '/usr/sbin/nginx'
const CADDY = process.env.CADDY_PATH ?? '/usr/bin/caddy'
const DOC = readFileSync(new URL('../../docs/proxies.md', import.meta.url), 'utf8')

/** The one fenced block of the document in `language`. */
export function fencedBlock (language: string): string {
  const blocks = [...DOC.matchAll(new RegExp('^```' + language + '\\n([\\s\\S]*?)^```$', 'gm'))].map((m) => m[1] ?? '')
  if (blocks.length !== 1) throw new Error(`docs/proxies.md has ${blocks.length} \`${language}\` blocks, not one`)
  return blocks[0] ?? ''
}

/** `text` with `from` replaced, which must be there (a changed document fails here, not silently). */
export function replaced (text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`docs/proxies.md no longer has ${JSON.stringify(from)}`)
  return text.split(from).join(to)
}

export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

function accepts (port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => { socket.end(); resolve(true) })
    socket.on('error', () => { resolve(false) })
  })
}

/** Starts a proxy; a missing binary fails the test (never a skip). Resolves once every port accepts. */
async function startProcess (t: Test, binary: string, args: string[], env: Record<string, string>, ports: number[]): Promise<ChildProcess> {
  if (!existsSync(binary)) throw new Error(`${binary} is missing: install it (apt-get install -y nginx caddy)`)
  const child = spawn(binary, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  t.teardown(async () => {
    if (child.exitCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  })
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`${binary} exited ${child.exitCode}: ${stderr}`)
    if ((await Promise.all(ports.map(accepts))).every(Boolean)) return child
    await sleep(50)
  }
  throw new Error(`${binary} did not listen on ${ports.join(', ')}: ${stderr}`)
}

/** The document's nginx block in its two parts: the `upstream` (once per nginx) and the servers. */
export function nginxParts (): { upstream: string, servers: string } {
  const block = fencedBlock('nginx')
  const at = block.search(/^(# .*\n)*server \{/m)
  if (at === -1) throw new Error('docs/proxies.md: the nginx block has no server')
  return { upstream: block.slice(0, at), servers: block.slice(at) }
}

/** nginx with `http` as its http block's content (everything else in `dir`), listening on `ports`. */
export async function startNginx (t: Test, dir: string, http: string, ports: number[]): Promise<void> {
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => `  ${name}_temp_path ${join(dir, name)};`).join('\n')
  const conf = join(dir, 'nginx.conf')
  writeFileSync(conf, `worker_processes 1;\npid ${join(dir, 'nginx.pid')};\nerror_log ${join(dir, 'error.log')} warn;\n` +
    `events { worker_connections 128; }\nhttp {\n  access_log off;\n${temp}\n${http}\n}\n`)
  await startProcess(t, NGINX, ['-p', dir, '-e', join(dir, 'error.log'), '-c', conf, '-g', 'daemon off;'], {}, ports)
}

/** Caddy with `sites` after a global block that turns off its admin endpoint and automatic https. */
export async function startCaddy (t: Test, dir: string, sites: string, ports: number[]): Promise<void> {
  const file = join(dir, 'Caddyfile')
  writeFileSync(file, `{\n\tadmin off\n\tauto_https off\n}\n${sites}`)
  for (const sub of ['home', 'data', 'config']) mkdirSync(join(dir, sub))
  const env = { HOME: join(dir, 'home'), XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config') }
  await startProcess(t, CADDY, ['run', '--config', file, '--adapter', 'caddyfile'], env, ports)
}

export interface Answer { status: number, headers: IncomingHttpHeaders, body: string }

export async function send (port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { text += chunk })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }) })
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** The application: answers 200 with the method and the headers it received, as JSON. */
export async function startUpstream (t: Test): Promise<number> {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ method: req.method, headers: req.headers }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  return (server.address() as AddressInfo).port
}

export interface Ports { gatehouse: number, upstream: number }

/** The document's upstream once, its servers once per variant, each on its own port. */
export function nginxHttp (ports: Ports, upstream: string, servers: { port: number, block: string }[]): string {
  const blocks = servers.map(({ port, block }) => {
    const text = replaced(block, 'listen 80;', `listen 127.0.0.1:${port};`)
    return replaced(text, '127.0.0.1:8080', `127.0.0.1:${ports.upstream}`)
  })
  return `${replaced(upstream, '127.0.0.1:3000', `127.0.0.1:${ports.gatehouse}`)}\n${blocks.join('\n')}`
}

export function caddySites (ports: Ports, sites: { port: number, block: string }[]): string {
  return sites.map(({ port, block }) => {
    let text = replaced(block, 'app.example.com {', `http://127.0.0.1:${port} {`)
    text = replaced(text, 'auth.example.com {', `http://auth.gh.localhost:${port} {`)
    text = replaced(text, '127.0.0.1:3000', `127.0.0.1:${ports.gatehouse}`)
    return replaced(text, '127.0.0.1:8080', `127.0.0.1:${ports.upstream}`)
  }).join('\n')
}
