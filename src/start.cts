/**
 * The process entry (`npm start`): sizes libuv's thread pool, then loads the server. CommonJS on
 * purpose: the pool is created on its first use and reads UV_THREADPOOL_SIZE then, and Node's ESM
 * loader uses the pool to read the very first ES module, so only code that runs before any ES
 * module is loaded can still choose its size. An operator's UV_THREADPOOL_SIZE wins.
 * See src/runtime/thread-pool.cts for the size, src/server.ts for the rest.
 */
import threadPool = require('./runtime/thread-pool.cjs')

process.env.UV_THREADPOOL_SIZE ??= String(threadPool.defaultThreadPoolSize())
import('./server.js').catch((err: unknown) => {
  // as an uncaught error in the server's own start would end it: the stack, then exit 1
  console.error(err)
  process.exit(1)
})
