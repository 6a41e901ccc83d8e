import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer, connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { simpleParser } from 'mailparser'
import type { TestContext } from '../helper.js'
import { toCaptured, type CapturedMail } from './smtp-capture.js'

/** Debian's interpreter, named explicitly: another python may come first on PATH without the package. */
const PYTHON = '/usr/bin/python3'

export interface AiosmtpdServer {
  port: number
  url: string
  maildir: string
  /** every message in the Maildir so far, oldest first */
  mails (): Promise<CapturedMail[]>
  waitForMail (predicate?: (mail: CapturedMail) => boolean, ms?: number): Promise<CapturedMail>
  child: ChildProcess
}

export async function freePort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

async function waitForPort (port: number, child: ChildProcess, output: () => string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms
  for (;;) {
    if (child.exitCode !== null) throw new Error(`aiosmtpd exited with ${child.exitCode}: ${output()}`)
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => { socket.destroy(); resolve(true) })
      socket.on('error', () => { resolve(false) })
    })
    if (open) return
    if (Date.now() > deadline) throw new Error(`aiosmtpd did not listen on ${port} within ${ms} ms: ${output()}`)
    await sleep(50)
  }
}

export interface AiosmtpdOptions {
  /** STARTTLS with this certificate (aiosmtpd --tlscert/--tlskey, TLS not demanded of clients) */
  tls?: { certFile: string, keyFile: string }
}

/**
 * Debian's aiosmtpd (python3-aiosmtpd), an SMTP stack we did not write, as a child:
 * `/usr/bin/python3 -m aiosmtpd -n -l 127.0.0.1:<port> -c aiosmtpd.handlers.Mailbox <maildir>`.
 * Its Mailbox handler writes each message to a Maildir the test reads (with the envelope in
 * X-MailFrom and X-RcptTo headers). Fails, never skips, when the package is missing. Stopped by
 * PID at teardown.
 */
export async function startAiosmtpd (t: TestContext, options: AiosmtpdOptions = {}): Promise<AiosmtpdServer> {
  if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: install python3-aiosmtpd (apt-get install -y python3-aiosmtpd)`)
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-aiosmtpd-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const maildir = join(dir, 'Maildir')
  const port = await freePort()
  const tls = options.tls === undefined ? [] : ['--tlscert', options.tls.certFile, '--tlskey', options.tls.keyFile, '--no-requiretls']
  const child = spawn(PYTHON, ['-m', 'aiosmtpd', '-n', '-l', `127.0.0.1:${port}`, ...tls, '-c', 'aiosmtpd.handlers.Mailbox', maildir], {
    env: { PATH: '/usr/bin:/bin', HOME: dir },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const exited = once(child, 'exit')
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      await exited
    }
  })
  await waitForPort(port, child, () => output)
  if (/No module named aiosmtpd/.test(output)) throw new Error('python3-aiosmtpd is missing: apt-get install -y python3-aiosmtpd')

  async function mails (): Promise<CapturedMail[]> {
    const folder = join(maildir, 'new')
    if (!existsSync(folder)) return []
    const files = readdirSync(folder).sort()
    const parsed: CapturedMail[] = []
    for (const file of files) {
      const mail = await simpleParser(readFileSync(join(folder, file)))
      const header = (name: string) => String(mail.headers.get(name) ?? '')
      parsed.push(await toCaptured(mail, { from: header('x-mailfrom'), to: header('x-rcptto').split(/,\s*/).filter(Boolean) }, false))
    }
    // Maildir names start with the delivery time in seconds: order within one second by the Date header
    return parsed.sort((a, b) => (a.parsed.date?.getTime() ?? 0) - (b.parsed.date?.getTime() ?? 0))
  }

  async function waitForMail (predicate: (mail: CapturedMail) => boolean = () => true, ms = 15_000): Promise<CapturedMail> {
    const deadline = Date.now() + ms
    for (;;) {
      const found = (await mails()).find(predicate)
      if (found !== undefined) return found
      if (Date.now() > deadline) throw new Error(`no matching mail in ${maildir} within ${ms} ms: ${output}`)
      await sleep(50)
    }
  }

  return { port, url: `smtp://127.0.0.1:${port}`, maildir, mails, waitForMail, child }
}
