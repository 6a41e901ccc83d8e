/*
 * CommonJS, so that src/start.cts can load it before any ES module is loaded (see there).
 */
import os = require('node:os')

/** Node's own default size of libuv's thread pool, where argon2 hashes (and fs, dns and zlib work). */
const NODE_DEFAULT = 4

/**
 * The pool size gatehouse starts with when UV_THREADPOOL_SIZE is unset: Node's four, but no more
 * threads than cores. A hash is pure CPU, so threads beyond the cores only interleave the same
 * work, and take turns with the event loop that answers every other request; and each thread that
 * has hashed keeps a malloc arena holding a hash's memory (19 MiB at the default ARGON2_MEMORY_COST),
 * so on a 2-core machine two extra threads were about 40 MB of RSS after a burst of sign-ins.
 */
function defaultThreadPoolSize (cores: number = os.availableParallelism()): number {
  return Math.max(1, Math.min(NODE_DEFAULT, cores))
}

export = { defaultThreadPoolSize }
