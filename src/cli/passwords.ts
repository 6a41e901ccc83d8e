import { createReadStream } from 'node:fs'
import { BadLine, buildBlocklist, FORMATS, type BlocklistFormat } from '../breached-passwords/build.js'
import { UsageError, type CommandGroup } from './command.js'
import { Failure } from './failure.js'
import { plural } from './output.js'

/** gatehouse passwords build-blocklist --out <file> [--in <file>] [--format plain|sha1] */
export const passwordsGroup: CommandGroup = {
  name: 'passwords',
  commands: {
    'build-blocklist': {
      usage: 'passwords build-blocklist --out <file> [--in <file>] [--format plain|sha1]',
      summary: 'build the breached-password blocklist BREACHED_PASSWORDS_FILE names, from one password (or SHA-1) a line',
      options: { out: { type: 'string' }, in: { type: 'string' }, format: { type: 'string', default: 'plain' } },
      required: ['out'],
      help: [
        '--out <file>     the blocklist to write (replaced atomically: a temporary file beside it, then a rename)',
        '--in <file>      the list to read (default: standard input)',
        '--format plain   one password a line, UTF-8 (the default); empty lines and lines over 1024 characters are skipped',
        '--format sha1    one SHA-1 a line, 40 hex digits, optionally :count (the Have I Been Pwned downloads)'
      ],
      /** Needs no setting and no database: it only reads the list and writes the file. */
      async run ({ values }) {
        const format = values.format as string
        if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError('--format must be plain or sha1')
        const out = values.out as string
        const source = values.in as string | undefined
        const input = source === undefined ? process.stdin : createReadStream(source)
        let report
        try {
          report = await buildBlocklist(input, out, format as BlocklistFormat)
        } catch (err) {
          if (err instanceof BadLine) throw new Failure(`${source ?? 'standard input'} ${err.message}; nothing was written`)
          // the file system's refusal as one line, by its code (ENOENT, EACCES, ENOSPC)
          const { path, code } = err as NodeJS.ErrnoException
          if (code === undefined) throw err
          throw new Failure(`${path === source ? `--in ${source} cannot be read` : `--out ${out} cannot be written`} (${code})`)
        }
        const { entries, lines, skipped } = report
        const text = `wrote ${out}: ${entries} ${entries === 1 ? 'entry' : 'entries'} from ${plural(lines, 'line')}${skipped > 0 ? ` (${skipped} skipped)` : ''}`
        return { text, json: { file: out, format, entries, lines, skipped } }
      }
    }
  }
}
