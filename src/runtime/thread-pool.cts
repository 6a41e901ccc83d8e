// CommonJS, so that src/start.cts can load it before any ES module is loaded
import os = require('node:os')

const NODE_DEFAULT = 4

/**
 * No more threads than cores: a hash is pure CPU, and each thread that has hashed keeps a malloc
 * arena holding a hash's memory (docs/benchmarks.md).
 */
function defaultThreadPoolSize (cores: number = os.availableParallelism()): number {
  return Math.max(1, Math.min(NODE_DEFAULT, cores))
}

export = { defaultThreadPoolSize }
