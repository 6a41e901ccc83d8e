import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from '../helper.js'

export interface SelfSigned {
  /** PEM; the certificate is its own CA, so it is also what a client trusts */
  cert: string
  key: string
  certFile: string
  keyFile: string
}

/**
 * A self-signed certificate for 127.0.0.1 and localhost, made by `openssl req -x509` in a fresh
 * folder removed at teardown. A client trusts it only when told to (the transport's `ca`, or
 * NODE_EXTRA_CA_CERTS in a child): by default the certificate is refused like any unknown one.
 */
export function selfSignedCert (t: TestContext, commonName = 'localhost'): SelfSigned {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const certFile = join(dir, 'cert.pem')
  const keyFile = join(dir, 'key.pem')
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '1',
    '-keyout', keyFile, '-out', certFile,
    '-subj', `/CN=${commonName}`,
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'
  ], { stdio: 'pipe' })
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), certFile, keyFile }
}
