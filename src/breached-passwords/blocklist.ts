import { hash } from 'node:crypto'
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'

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
 * An open blocklist, searched with positioned reads: memory does not grow with the file, and the
 * page cache keeps the pages a search touches (about 24 reads of 8 bytes for 10 million
 * entries). The reads are synchronous on purpose: a few microseconds each on a cached file, where
 * an asynchronous read would wait in libuv's thread pool behind the argon2 hashes of the same
 * requests. The file stays open: a new list built over it (a rename) is read after a restart.
 */
export class Blocklist {
  private readonly entry = Buffer.alloc(ENTRY_BYTES)

  private constructor (private readonly fd: number, readonly count: number) {}

  /** Opens and checks the file (header, size); throws MalformedBlocklist or the error of a file that cannot be read. */
  static open (file: string): Blocklist {
    const fd = openSync(file, 'r')
    try {
      return new Blocklist(fd, countOf(fd))
    } catch (err) {
      closeSync(fd)
      throw err
    }
  }

  /** Whether the password's entry is in the file: a binary search over the sorted entries. */
  has (password: string): boolean {
    const key = entryOf(password)
    let low = 0
    let high = this.count - 1
    while (low <= high) {
      const middle = Math.floor((low + high) / 2)
      // a file cut short since it was checked answers "not listed" rather than comparing stale bytes
      if (readSync(this.fd, this.entry, 0, ENTRY_BYTES, HEADER_BYTES + middle * ENTRY_BYTES) < ENTRY_BYTES) return false
      const order = this.entry.compare(key)
      if (order === 0) return true
      if (order < 0) low = middle + 1
      else high = middle - 1
    }
    return false
  }

  close (): void {
    closeSync(this.fd)
  }
}
