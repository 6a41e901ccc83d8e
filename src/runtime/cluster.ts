import cluster, { type Worker } from 'node:cluster'
import type { Logger } from 'pino'

/** A worker that lived this long before dying was not crash-looping: its restart is immediate. */
const STABLE_AFTER_MS = 10_000
const FIRST_BACKOFF_MS = 500
const MAX_BACKOFF_MS = 30_000

/**
 * The primary of WORKERS > 1: forks the workers, which share the listening port (the primary
 * hands connections out round-robin), restarts one that dies unexpectedly after a backoff that
 * doubles while restarts keep failing, and on SIGTERM/SIGINT passes the signal on, waits for
 * every worker to drain and close, and exits 0 (1 if a worker did not close cleanly).
 */
export function runPrimary (workers: number, log: Logger): void {
  let stopping = false
  let failures = 0
  let cleanExit = true
  const started = new Map<number, number>()

  const fork = () => {
    const worker = cluster.fork()
    started.set(worker.id, Date.now())
  }

  cluster.on('exit', (worker: Worker, code: number | null, signal: string | null) => {
    const lived = Date.now() - (started.get(worker.id) ?? Date.now())
    started.delete(worker.id)
    if (stopping) {
      if (code !== 0 && signal !== 'SIGTERM') cleanExit = false
      log.info({ worker: worker.process.pid, code, signal }, 'worker stopped')
      if (started.size === 0) {
        log.info('all workers stopped')
        process.exit(cleanExit ? 0 : 1)
      }
      return
    }
    failures = lived >= STABLE_AFTER_MS ? 0 : failures + 1
    const delay = failures === 0 ? 0 : Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (failures - 1))
    log.error({ worker: worker.process.pid, code, signal, restartInMs: delay }, 'worker died; restarting it')
    setTimeout(() => { if (!stopping) fork() }, delay).unref()
  })

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    log.info({ signal }, 'closing: stopping the workers')
    if (started.size === 0) process.exit(0)
    // SIGTERM whatever came in: workers ignore SIGINT (src/server.ts), so Ctrl-C drains them once
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM')
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)

  for (let i = 0; i < workers; i++) fork()
  log.info({ workers }, 'primary started')
}
