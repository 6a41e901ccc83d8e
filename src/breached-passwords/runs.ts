import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs'
import { endianness } from 'node:os'

/*
 * The builder's external sort (src/breached-passwords/build.ts): a list too long to sort in
 * memory is sorted a part at a time, each part written to a temporary "run" file beside the
 * output, and the runs are merged into the output, so the builder's memory is bounded by one part
 * whatever the input's length (the HIBP corpus has about a billion lines).
 */

const BLOCK = 1 << 16
const LITTLE_ENDIAN = endianness() === 'LE'

/** Entries in the file's order (big-endian) written from a buffer of `BLOCK` entries. */
export class EntryWriter {
  private readonly buffer = new BigUint64Array(BLOCK)
  private length = 0
  private last = 0n
  /** the entries written so far */
  written = 0

  constructor (private readonly fd: number) {}

  /** Appends `value` unless it repeats the last one written. */
  push (value: bigint): void {
    if (this.written > 0 && this.last === value) return
    this.last = value
    this.written++
    this.buffer[this.length++] = value
    if (this.length === BLOCK) this.flush()
  }

  flush (): void {
    const bytes = Buffer.from(this.buffer.buffer, 0, this.length * 8)
    if (LITTLE_ENDIAN) bytes.swap64()
    writeSync(this.fd, bytes)
    this.length = 0
  }
}

/** One run, read a block at a time (the runs are written in the machine's own byte order). */
class RunReader {
  private readonly buffer = new BigUint64Array(BLOCK)
  private length = 0
  private index = 0
  private position = 0
  current: bigint | undefined

  constructor (private readonly fd: number) {
    this.advance()
  }

  advance (): void {
    if (this.index === this.length) {
      const read = readSync(this.fd, new Uint8Array(this.buffer.buffer), 0, BLOCK * 8, this.position)
      this.position += read
      this.length = read / 8
      this.index = 0
    }
    this.current = this.index < this.length ? this.buffer[this.index++] : undefined
  }
}

/** The sorted runs of one build, in temporary files named `<base>.run<n>`, removed by `remove()`. */
export class SortedRuns {
  private readonly files: string[] = []

  constructor (private readonly base: string) {}

  get count (): number {
    return this.files.length
  }

  /** Writes sorted, unique `values` as the next run. */
  add (values: BigUint64Array): void {
    const file = `${this.base}.run${this.files.length}`
    this.files.push(file)
    const fd = openSync(file, 'wx', 0o600)
    try {
      for (let i = 0; i < values.length; i += BLOCK) writeSync(fd, new Uint8Array(values.buffer, values.byteOffset + i * 8, Math.min(BLOCK, values.length - i) * 8))
    } finally {
      closeSync(fd)
    }
  }

  /** Merges every run into `writer`, in order and unique: a heap of the runs by their current entry. */
  mergeInto (writer: EntryWriter): void {
    const fds = this.files.map((file) => openSync(file, 'r'))
    try {
      const heap = fds.map((fd) => new RunReader(fd)).filter((run) => run.current !== undefined)
      const below = (a: number, b: number) => (heap[a]?.current ?? 0n) < (heap[b]?.current ?? 0n)
      const siftDown = (from: number) => {
        for (let at = from; ;) {
          const left = 2 * at + 1
          const smaller = left + 1 < heap.length && below(left + 1, left) ? left + 1 : left
          if (smaller >= heap.length || !below(smaller, at)) return
          const swapped = heap[at] as RunReader
          heap[at] = heap[smaller] as RunReader
          heap[smaller] = swapped
          at = smaller
        }
      }
      for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(i)
      while (heap.length > 0) {
        const top = heap[0] as RunReader
        writer.push(top.current ?? 0n)
        top.advance()
        if (top.current === undefined) {
          const last = heap.pop() as RunReader
          if (heap.length === 0) break
          heap[0] = last
        }
        siftDown(0)
      }
      writer.flush()
    } finally {
      for (const fd of fds) closeSync(fd)
    }
  }

  remove (): void {
    for (const file of this.files) rmSync(file, { force: true })
  }
}
