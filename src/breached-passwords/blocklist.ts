import { hash } from 'node:crypto'
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { ConfigError } from '../errors.js'

/*
 * The blocklist file (docs/breached-passwords.md): a 16-byte header, `GHBLOCK1` and the number of
 * entries as an unsigned 64-bit big-endian integer, then that many 8-byte entries, each the first
 * 8 bytes of the SHA-1 of a password's UTF-8 bytes, sorted ascending and unique.
 */
export const MAGIC = 'GHBLOCK1'
export const HEADER_BYTES = 16
export const ENTRY_BYTES = 8

/** The file is not a blocklist; the message says why, for a ConfigError naming the setting. */
export class MalformedBlocklist extends Error {}

/** The entry a password has in the file: the first 8 bytes of the SHA-1 of its UTF-8 bytes. */
export function entryOf (password: string | Uint8Array): Buffer {
  return hash('sha1', password, 'buffer').subarray(0, ENTRY_BYTES)
}

/** The number of entries an open file holds, once its header and size agree; else MalformedBlocklist. */
function countOf (fd: number): number {
  const size = fstatSync(fd).size
  const header = Buffer.alloc(HEADER_BYTES)
  const read = readSync(fd, header, 0, HEADER_BYTES, 0)
  if (read < HEADER_BYTES || header.toString('latin1', 0, MAGIC.length) !== MAGIC) {
    throw new MalformedBlocklist(`does not start with the ${MAGIC} header (build it with gatehouse passwords build-blocklist)`)
  }
  const count = header.readBigUInt64BE(MAGIC.length)
  const expected = BigInt(HEADER_BYTES) + BigInt(ENTRY_BYTES) * count
  if (BigInt(size) !== expected) throw new MalformedBlocklist(`is ${size} bytes where its header's count of ${count} entries needs ${expected}`)
  return Number(count)
}

/**
 * `samples`: entries kept in memory to start each search from (16,384: 128 KiB whatever the file's
 * size); `block`: a range this small (1,024 entries, 8 KiB) is read whole and searched in memory.
 * Tests make them small, so that every step of a search runs on a small file.
 */
export interface SearchShape { samples: number, block: number }
const SHAPE: SearchShape = { samples: 16_384, block: 1024 }

/**
 * An open blocklist, searched with positioned reads: memory does not grow with the file (a fixed
 * sample of 16,384 entries, read at open, narrows each search; the rest is read from the file,
 * which the page cache keeps). Up to 16 million entries a search is the sample's binary search in
 * memory, then one read of at most 8 KiB; past that, a few reads of 8 bytes come first (a
 * billion entries: 6). The reads are synchronous on purpose: microseconds each on a cached file, where an
 * asynchronous read would wait in libuv's thread pool behind the argon2 hashes of the same
 * requests. The file stays open: a list built over it (a rename) is read after a restart.
 */
export class Blocklist {
  private readonly entry = Buffer.alloc(ENTRY_BYTES)
  private readonly block: Buffer
  /** the entries at positions `positionOf(0…)`, ascending */
  private readonly samples: BigUint64Array

  private constructor (private readonly fd: number, readonly count: number, private readonly shape: SearchShape) {
    this.block = Buffer.alloc(shape.block * ENTRY_BYTES)
    const size = Math.min(count, shape.samples)
    this.samples = new BigUint64Array(size)
    for (let i = 0; i < size; i++) this.samples[i] = this.at(this.positionOf(i)) ?? 0n
  }

  /** Where the `i`th sample is in the file; the count past the last one. */
  private positionOf (i: number): number {
    return Math.floor(i * this.count / this.samples.length)
  }

  /** Opens and checks the file (header, size); throws MalformedBlocklist or the error of a file that cannot be read. */
  static open (file: string, shape: SearchShape = SHAPE): Blocklist {
    const fd = openSync(file, 'r')
    try {
      return new Blocklist(fd, countOf(fd), shape)
    } catch (err) {
      closeSync(fd)
      throw err
    }
  }

  /** The entry at `index`; undefined if the file was cut short since it was checked. */
  private at (index: number): bigint | undefined {
    const read = readSync(this.fd, this.entry, 0, ENTRY_BYTES, HEADER_BYTES + index * ENTRY_BYTES)
    return read < ENTRY_BYTES ? undefined : this.entry.readBigUInt64BE(0)
  }

  /** Whether the password's entry is in the file: a binary search over the sorted entries. */
  has (password: string): boolean {
    const key = entryOf(password).readBigUInt64BE(0)
    // the last sample not above the key: the entry, if listed, is between it and the next sample
    let low = 0
    let high = this.samples.length - 1
    while (low <= high) {
      const middle = (low + high) >>> 1
      if ((this.samples[middle] ?? 0n) <= key) low = middle + 1
      else high = middle - 1
    }
    if (high < 0) return false
    if (this.samples[high] === key) return true
    return this.inFile(key, this.positionOf(high) + 1, this.positionOf(high + 1) - 1)
  }

  /** The binary search of entries `first`..`last` in the file: 8-byte reads down to a block, then the block in one read. */
  private inFile (key: bigint, first: number, last: number): boolean {
    let low = first
    let high = last
    while (high - low + 1 > this.shape.block) {
      const middle = Math.floor((low + high) / 2)
      const entry = this.at(middle)
      if (entry === undefined) return false
      if (entry === key) return true
      if (entry < key) low = middle + 1
      else high = middle - 1
    }
    if (high < low) return false
    const bytes = (high - low + 1) * ENTRY_BYTES
    // a file cut short since it was checked answers "not listed" rather than comparing stale bytes
    if (readSync(this.fd, this.block, 0, bytes, HEADER_BYTES + low * ENTRY_BYTES) < bytes) return false
    let from = 0
    let to = high - low
    while (from <= to) {
      const middle = (from + to) >>> 1
      const entry = this.block.readBigUInt64BE(middle * ENTRY_BYTES)
      if (entry === key) return true
      if (entry < key) from = middle + 1
      else to = middle - 1
    }
    return false
  }

  close (): void {
    closeSync(this.fd)
  }
}

/** BREACHED_PASSWORDS_FILE opened, or a ConfigError naming the setting and why the file is refused. */
export function openSetting (file: string): Blocklist {
  try {
    return Blocklist.open(file)
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException
    const why = err instanceof MalformedBlocklist ? message : `cannot be read (${code ?? message})`
    throw new ConfigError(`Invalid configuration: BREACHED_PASSWORDS_FILE ${file} ${why}`)
  }
}
