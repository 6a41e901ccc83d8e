// first: holds the young generation's growth until the server listens (see the module)
import { releaseYoungGeneration } from './runtime/young-generation.js'
import cluster from 'node:cluster'
import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import { pino, type LoggerOptions } from 'pino'
import { runPrimary } from './runtime/cluster.js'
import { ConfigError } from './errors.js'
import { loggerOptions } from './logging/logger.js'

const REAP_INTERVAL_MS = 50

/**
 * A socket whose request is still running when close begins would hold the process for the
 * whole keepAliveTimeout; reaping on an interval spares every request a listener.
 */
function reapIdleSocketsWhileClosing (app: FastifyInstance): { closing: () => void } {
  return {
    closing: () => {
      const timer = setInterval(() => { app.server.closeIdleConnections() }, REAP_INTERVAL_MS)
      app.server.once('close', () => { clearInterval(timer) })
    }
  }
}

/** Process entry; with WORKERS > 1 this is the primary and each worker runs the same entry. */
async function main (): Promise<void> {
  // imported late: a static import graph loads whole before the young-generation hold begins
  const { loadConfig } = await import('./config/config.js')
  const { takeNotices } = await import('./config/notices.js')
  let config
  try {
    config = loadConfig()
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`gatehouse: ${err.message}\n`)
      process.exit(1)
    }
    throw err
  }
  if (config.workers > 1 && cluster.isPrimary) {
    const log = pino(loggerOptions(config) as LoggerOptions)
    for (const message of takeNotices()) log.warn(message)
    runPrimary(config.workers, log)
    releaseYoungGeneration()
    return
  }
  const { buildApp } = await import('./app.js')
  let app: FastifyInstance
  try {
    app = await buildApp(config)
  } catch (err) {
    // a setting that only the stored data can refute (DATA_ENCRYPTION_KEYS against the stored keys)
    if (err instanceof ConfigError) {
      process.stderr.write(`gatehouse: ${err.message}\n`)
      process.exit(1)
    }
    throw err
  }
  for (const message of takeNotices()) app.log.warn(message)
  const sockets = reapIdleSocketsWhileClosing(app)
  // a worker stops on the primary's SIGTERM only: a terminal's Ctrl-C reaches the whole process
  // group, and a second signal would make close-with-grace exit at once instead of draining
  if (cluster.isWorker) process.on('SIGINT', () => {})
  closeWithGrace({ delay: 10_000, skip: cluster.isWorker ? ['SIGINT'] : [] }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'closing after an error')
    else app.log.info({ signal }, 'closing')
    sockets.closing()
    await app.close()
  })
  await app.listen({ port: config.port, host: config.host })
  releaseYoungGeneration()
}

await main()
