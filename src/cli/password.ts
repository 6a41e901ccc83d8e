import type { BreachedPasswords } from '../breached-passwords/breached-passwords.js'
import { Failure } from './failure.js'

const LENGTH = 'the password (stdin) must be 8 to 1024 characters'

/**
 * The password, from the first line of standard input: never an argument, where `ps` and shell
 * history would show it. Typed at a terminal it is read without echo (scrollback and screen
 * recordings keep what a terminal shows), asked twice since a typo cannot be seen; a pipe is read
 * as before.
 */
export async function readPassword (): Promise<string> {
  const password = process.stdin.isTTY ? await fromTerminal() : await fromPipe()
  if (password.length < 8 || password.length > 1024) throw new Failure(LENGTH)
  return password
}

/** A new password's last rule, once its length passed (as the API's `notBreached`): not in BREACHED_PASSWORDS_FILE. */
export function refuseBreached (list: BreachedPasswords | undefined, password: string): void {
  if (list?.refuses(password) === true) throw new Failure('the password (stdin) is a known breached password (BREACHED_PASSWORDS_FILE)')
}

async function fromPipe (): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/, 1)[0] ?? ''
}

async function fromTerminal (): Promise<string> {
  const [first, again] = await hiddenLines(['Password: ', 'Repeat the password: '])
  if (first !== again) throw new Failure('the passwords typed do not match')
  return first ?? ''
}

/**
 * Lines typed with the terminal in raw mode, so nothing is echoed, each after its prompt: Enter
 * ends a line (what was typed ahead belongs to the next), Backspace takes a character back, Ctrl-C
 * or Ctrl-D on an empty line cancels. Prompts go to stderr, keeping stdout for the output (`--json`).
 */
async function hiddenLines (prompts: string[]): Promise<string[]> {
  const stdin = process.stdin
  const lines: string[] = []
  let line = ''
  // echo off before the prompt shows, so nothing typed the moment it appears is echoed
  stdin.setRawMode(true)
  stdin.setEncoding('utf8')
  process.stderr.write(prompts[0] ?? '')
  try {
    return await new Promise<string[]>((resolve, reject) => {
      const onData = (text: string) => {
        for (const char of text) {
          if (char === '\u0003' || (char === '\u0004' && line === '')) {
            process.stderr.write('\n')
            return reject(new Failure('cancelled: no password was read'))
          }
          if (char === '\r' || char === '\n') {
            lines.push(line)
            line = ''
            process.stderr.write('\n')
            if (lines.length === prompts.length) return resolve(lines)
            process.stderr.write(prompts[lines.length] ?? '')
          } else if (char === '\u007f' || char === '\b') line = [...line].slice(0, -1).join('')
          else if (char >= ' ') line += char
        }
      }
      stdin.on('data', onData)
      stdin.resume()
    }).finally(() => { stdin.removeAllListeners('data') })
  } finally {
    stdin.setRawMode(false)
    stdin.pause()
  }
}
