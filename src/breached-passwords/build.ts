import { randomBytes } from 'node:crypto'
import { isUtf8 } from 'node:buffer'
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { ENTRY_BYTES, entryOf, HEADER_BYTES, MAGIC } from './blocklist.js'
import { EntryWriter, SortedRuns } from './runs.js'

/*
 * `gatehouse passwords build-blocklist` (docs/breached-passwords.md): passwords or SHA-1s, one a
 * line, into the file src/breached-passwords/blocklist.ts searches.
 */

export const FORMATS = ['plain', 'sha1'] as const
export type BlocklistFormat = typeof FORMATS[number]

/** What a build read and wrote: the entries written, the lines read, the lines skipped (plain only). */
export interface BuildReport { entries: number, lines: number, skipped: number }

/** A line the sha1 format cannot take: nothing is written. */
export class BadLine extends Error {}

const MAX_CHARACTERS = 1024
/** A line longer than this is over 1024 characters whatever its UTF-8: it is skipped unread. */
const MAX_LINE_BYTES = 4 * MAX_CHARACTERS
const SHA1_LINE = /^[0-9A-Fa-f]{40}(?::[0-9]+)?$/
const CR = 13
const LF = 10

/**
 * The entries read so far, 8 bytes each, in a typed array that doubles as it fills up to
 * `capacity`; a full one is handed to `spill` sorted and unique, and starts again empty.
 */
class Entries {
  private values: BigUint64Array
  private length = 0

  constructor (private readonly capacity: number, private readonly spill: (sorted: BigUint64Array) => void) {
    this.values = new BigUint64Array(Math.min(1 << 16, capacity))
  }

  push (value: bigint): void {
    if (this.length === this.values.length) {
      if (this.length >= this.capacity) {
        this.spill(this.sortedUnique())
        this.length = 0
      } else {
        const grown = new BigUint64Array(Math.min(this.values.length * 2, this.capacity))
        grown.set(this.values)
        this.values = grown
      }
    }
    this.values[this.length++] = value
  }

  /** Sorted ascending (as unsigned numbers, which is the big-endian bytes' order) and unique. */
  sortedUnique (): BigUint64Array {
    const sorted = this.values.subarray(0, this.length).sort()
    let kept = 0
    for (let i = 0; i < sorted.length; i++) {
      if (kept === 0 || sorted[i] !== sorted[kept - 1]) sorted[kept++] = sorted[i] ?? 0n
    }
    return sorted.subarray(0, kept)
  }
}

/** Code points in valid UTF-8: every byte that does not continue a sequence starts one. */
function characters (bytes: Buffer): number {
  let count = 0
  for (const byte of bytes) if ((byte & 0xc0) !== 0x80) count++
  return count
}

/** One line's entry, or undefined when the line is skipped. `\r` ending a line is dropped before this. */
function entryOfLine (line: Buffer, format: BlocklistFormat, number: number): bigint | undefined {
  if (line.length === 0) return undefined
  if (format === 'sha1') {
    const text = line.toString('latin1')
    if (!SHA1_LINE.test(text)) throw new BadLine(`line ${number}: not a SHA-1 (40 hex digits, optionally :count)`)
    return BigInt(`0x${text.slice(0, 2 * ENTRY_BYTES)}`)
  }
  // a line that is not UTF-8 can never be the UTF-8 bytes of a password the server checks
  if (line.length > MAX_LINE_BYTES || (line.length > MAX_CHARACTERS && characters(line) > MAX_CHARACTERS) || !isUtf8(line)) return undefined
  return entryOf(line).readBigUInt64BE(0)
}

/** Reads every line of the input into entries; a line too long to hold is skipped (plain) or refused (sha1). */
async function readEntries (input: AsyncIterable<Buffer | string>, format: BlocklistFormat, entries: Entries): Promise<{ lines: number, skipped: number }> {
  let lines = 0
  let skipped = 0
  let rest = Buffer.alloc(0)
  let overlong = false
  const take = (line: Buffer) => {
    lines++
    const end = line.length > 0 && line[line.length - 1] === CR ? line.length - 1 : line.length
    const value = overlong ? undefined : entryOfLine(line.subarray(0, end), format, lines)
    if (overlong && format === 'sha1') throw new BadLine(`line ${lines}: not a SHA-1 (40 hex digits, optionally :count)`)
    if (value === undefined) skipped++
    else entries.push(value)
    overlong = false
  }
  for await (const chunk of input) {
    const buffer = rest.length === 0 ? Buffer.from(chunk) : Buffer.concat([rest, Buffer.from(chunk)])
    let start = 0
    for (let end = buffer.indexOf(LF, start); end !== -1; end = buffer.indexOf(LF, start)) {
      take(buffer.subarray(start, end))
      start = end + 1
    }
    rest = buffer.subarray(start)
    // a line with no end in sight is over the bound: drop what was read of it, remember to skip it
    if (rest.length > MAX_LINE_BYTES + 1) {
      overlong = true
      rest = Buffer.alloc(0)
    }
  }
  if (rest.length > 0 || overlong) take(rest)
  return { lines, skipped }
}

/**
 * The header and what `fill` writes into `temporary`, synced, then renamed over `out`. The count
 * is known once the entries are written: the header is written last, at the start of the file.
 */
function writeAtomically (temporary: string, out: string, fill: (writer: EntryWriter) => void): number {
  const fd = openSync(temporary, 'wx', 0o644)
  let open = true
  try {
    writeSync(fd, Buffer.alloc(HEADER_BYTES))
    const writer = new EntryWriter(fd)
    fill(writer)
    const header = Buffer.alloc(HEADER_BYTES)
    header.write(MAGIC, 0, 'latin1')
    header.writeBigUInt64BE(BigInt(writer.written), MAGIC.length)
    writeSync(fd, header, 0, HEADER_BYTES, 0)
    fsyncSync(fd)
    closeSync(fd)
    open = false
    renameSync(temporary, out)
    return writer.written
  } catch (err) {
    if (open) closeSync(fd)
    rmSync(temporary, { force: true })
    throw err
  }
}

/** Entries held in memory before a sorted run goes to disk: 32 Mi (256 MiB); tests make it small. */
const RUN_ENTRIES = 1 << 25

/**
 * Builds the blocklist at `out` from the lines of `input`; on any failure `out` is left as it
 * was. Up to `runEntries` entries are sorted in memory; a longer list is sorted in runs on disk,
 * beside `out`, and merged (src/breached-passwords/runs.ts).
 */
export async function buildBlocklist (input: AsyncIterable<Buffer | string>, out: string, format: BlocklistFormat, runEntries = RUN_ENTRIES): Promise<BuildReport> {
  const temporary = join(dirname(out), `.${basename(out)}.${randomBytes(6).toString('hex')}.tmp`)
  const runs = new SortedRuns(temporary)
  try {
    const entries = new Entries(runEntries, (sorted) => { runs.add(sorted) })
    const { lines, skipped } = await readEntries(input, format, entries)
    const last = entries.sortedUnique()
    const written = writeAtomically(temporary, out, (writer) => {
      if (runs.count === 0) {
        for (const value of last) writer.push(value)
        writer.flush()
        return
      }
      runs.add(last)
      runs.mergeInto(writer)
    })
    return { entries: written, lines, skipped }
  } finally {
    runs.remove()
  }
}
