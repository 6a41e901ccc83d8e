import { execFile, spawn } from 'node:child_process'
import { promisify } from 'node:util'

/*
 * Password hashes made by tools nobody here wrote, each run as a child process: Debian's
 * `htpasswd -B` (apache2-utils) for bcrypt, Debian's `argon2` command, and Python's hashlib for
 * scrypt and PBKDF2 in passlib's PHC form and in Django's form, built the way
 * django.contrib.auth.hashers.PBKDF2PasswordHasher builds it, and PBKDF2-SHA512 as Keycloak's
 * export writes it.
 */

const run = promisify(execFile)

/** `htpasswd -nbB -C <cost>`: the `$2y$` hash apache2-utils writes. */
export async function htpasswdBcrypt (password: string, cost = 4): Promise<string> {
  const { stdout } = await run('htpasswd', ['-nbB', '-C', String(cost), 'user', password])
  const hash = stdout.trim().split(':')[1]
  if (hash === undefined) throw new Error(`htpasswd printed ${stdout}`)
  return hash
}

/** Writes `input` to a child's standard input and answers its standard output. */
async function piped (command: string, args: string[], input: string): Promise<string> {
  return await new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
    child.on('error', reject)
    child.on('close', (code) => { code === 0 ? resolve(out.trim()) : reject(new Error(`${command} exited ${code}: ${err}`)) })
    child.stdin.end(input)
  })
}

export interface Argon2Options { type: 'id' | 'i' | 'd', memoryKiB: number, time: number, lanes: number, version?: '10' | '13' }

/** Debian's `argon2 <salt> -id -k … -t … -p … -e`: the PHC string of the reference implementation. */
export async function argon2Cli (password: string, { type, memoryKiB, time, lanes, version = '13' }: Argon2Options): Promise<string> {
  const salt = `salt${Math.random().toString(36).slice(2, 14)}`
  return await piped('argon2', [salt, `-${type}`, '-k', String(memoryKiB), '-t', String(time), '-p', String(lanes), '-v', version, '-e'], password)
}

const PYTHON = `
import base64, hashlib, json, os, sys
req = json.loads(sys.stdin.read())
pw = req["password"].encode("utf-8")
b64 = lambda b: base64.b64encode(b).decode().rstrip("=")
ab64 = lambda b: b64(b).replace("+", ".")
kind = req["kind"]
if kind == "scrypt":
    salt = os.urandom(16)
    ln, r, p = req["ln"], req["r"], req["p"]
    key = hashlib.scrypt(pw, salt=salt, n=2 ** ln, r=r, p=p, maxmem=256 * 1024 * 1024 + 1024 * 1024, dklen=32)
    print("$scrypt$ln=%d,r=%d,p=%d$%s$%s" % (ln, r, p, b64(salt), b64(key)))
elif kind in ("pbkdf2-sha256", "pbkdf2-sha512"):
    salt = os.urandom(16)
    digest = kind.split("-")[1]
    key = hashlib.pbkdf2_hmac(digest, pw, salt, req["rounds"])
    print("$%s$%d$%s$%s" % (kind, req["rounds"], ab64(salt), ab64(key)))
elif kind == "django":
    # django.contrib.auth.hashers: a random alphanumeric salt string, the key in padded base64
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    salt = "".join(alphabet[b % len(alphabet)] for b in os.urandom(22))
    key = hashlib.pbkdf2_hmac("sha256", pw, salt.encode(), req["rounds"])
    print("pbkdf2_sha256$%d$%s$%s" % (req["rounds"], salt, base64.b64encode(key).decode("ascii").strip()))
elif kind == "keycloak-sha512":
    # Keycloak's secretData: standard base64 with its padding, a 64-byte key; drawn until the key
    # shows both + and / (the characters a conversion to another alphabet would get wrong)
    while True:
        salt = os.urandom(16)
        key = hashlib.pbkdf2_hmac("sha512", pw, salt, req["rounds"], 64)
        value = base64.b64encode(key).decode()
        if "+" in value and "/" in value:
            break
    print(json.dumps({"value": value, "salt": base64.b64encode(salt).decode(), "additionalParameters": {}}))
`

export type PythonHash = { kind: 'scrypt', ln: number, r: number, p: number } | { kind: 'pbkdf2-sha256' | 'pbkdf2-sha512' | 'django' | 'keycloak-sha512', rounds: number }

/** python3's hashlib, the hash written in passlib's PHC form or Django's, or Keycloak's `secretData` (a JSON string). */
export async function pythonHash (password: string, request: PythonHash): Promise<string> {
  return await piped('python3', ['-c', PYTHON], JSON.stringify({ password, ...request }))
}
