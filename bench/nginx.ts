import { spawn } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BenchError, freePort, registerChild, waitReady, type Child } from './servers.js'

const NGINX = process.env.NGINX_PATH ?? '/usr/sbin/nginx'
const HOST = '127.0.0.1'

/** The nginx block of docs/proxies.md, as the proxy test runs it (from dist/bench/ or bench/ alike). */
function documentedServer (): string {
  const doc = readFileSync(fileURLToPath(new URL('../../docs/proxies.md', import.meta.url)), 'utf8')
  const block = /^```nginx\n([\s\S]*?)^```$/m.exec(doc)?.[1]
  if (block === undefined) throw new BenchError('docs/proxies.md has no nginx block')
  return block
}

function address (url: string): string {
  return new URL(url).host
}

/** nginx → gatehouse → application, and nginx → application alone, in one nginx on two ports. */
export interface NginxChain { chain: Child, plain: Child }

/**
 * One nginx (`daemon off`, everything in `dir`) with two servers in front of `upstream`: the
 * configuration of docs/proxies.md asking `gatehouse`, and a plain proxy_pass (the ceiling).
 */
export async function startNginx (dir: string, gatehouse: Child, upstream: Child): Promise<NginxChain> {
  if (!existsSync(NGINX)) throw new BenchError(`${NGINX} is missing: apt-get install -y nginx`)
  const home = join(dir, 'nginx')
  mkdirSync(home)
  const [chainPort, plainPort] = [await freePort(), await freePort()]
  // the document's upstream and server blocks, as they are
  const server = documentedServer()
    .replaceAll('listen 80;', `listen ${HOST}:${chainPort};`)
    .replaceAll('127.0.0.1:3000', address(gatehouse.url))
    .replaceAll('127.0.0.1:8080', address(upstream.url))
  const plain = `server {\n    listen ${HOST}:${plainPort};\n    location / {\n        proxy_pass ${upstream.url};\n    }\n}\n`
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((n) => `  ${n}_temp_path ${join(home, n)};`).join('\n')
  const conf = join(home, 'nginx.conf')
  // keepalive_requests: nginx closes a client's kept-alive connection after 1,000 requests by
  // default, and autocannon counts the request caught by each close as an error (dozens a run at
  // these rates, on the chain and the ceiling alike): the load's connections are kept for the run
  writeFileSync(conf, `worker_processes 1;\npid ${join(home, 'nginx.pid')};\nerror_log ${join(home, 'error.log')} warn;\n` +
    `events { worker_connections 1024; }\nhttp {\n  access_log off;\n  keepalive_requests 1000000;\n${temp}\n${server}\n${plain}}\n`)
  const logFile = join(dir, 'nginx.log')
  const fd = openSync(logFile, 'a')
  const proc = spawn(NGINX, ['-p', home, '-e', join(home, 'error.log'), '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', fd, fd] })
  closeSync(fd)
  registerChild(proc)
  if (proc.pid === undefined) throw new BenchError('nginx did not start')
  const child = (name: string, port: number): Child => ({ name, process: proc, pid: proc.pid ?? 0, url: `http://${HOST}:${port}`, logFile })
  const result = { chain: child('nginx → gatehouse → bare', chainPort), plain: child('nginx → bare', plainPort) }
  await waitReady(result.plain, '/')
  return result
}
