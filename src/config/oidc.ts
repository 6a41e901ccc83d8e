import { readFileSync } from 'node:fs'
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { FileClient } from '../../schemas/oidc-clients.js'
import { ConfigError } from '../errors.js'
import { clientFields, clientRuleFailures, type ClientFields } from './oidc-client-rules.js'

/*
 * The settings of the OpenID Connect provider (docs/oidc.md): their own module, spread into
 * ConfigSchema (src/config/config.ts). Off by default; while off, none of its routes exists.
 */

export const OidcSettings = {
  ENABLE_OIDC_PROVIDER: Type.Boolean({
    default: false,
    description: '`true` makes gatehouse an OpenID Connect provider (docs/oidc.md): `/oauth2/*`, the discovery documents, ' +
      '`/api/oauth2/clients` and `/api/auth/grants`. Needs `ENABLE_PORTAL`, an asymmetric `JWT_ALG` and `PUBLIC_URL`, which is the issuer exactly (no trailing slash)'
  }),
  OIDC_CLIENTS_FILE: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 4096,
    examples: ['/etc/gatehouse/clients.json'],
    description: 'a JSON array of clients read at start (docs/oidc.md#the-clients-file), their secrets only by `client_secret_env` or ' +
      '`client_secret_file`; read-only: the API and the CLI refuse to change them (409 `client_read_only`). A client_id both here and in the database stops the start'
  }))
}

type OidcRaw = Static<ReturnType<typeof Type.Object<typeof OidcSettings>>> & {
  ENABLE_PORTAL: boolean
  JWT_ALG: string
  PUBLIC_URL?: string | undefined
}

/** A client of OIDC_CLIENTS_FILE, its secret read from the environment or its file. */
export interface FileClientEntry extends ClientFields { secret: string | undefined }

export interface OidcConfig {
  /** ENABLE_OIDC_PROVIDER: the issuer (PUBLIC_URL) and the clients of OIDC_CLIENTS_FILE; undefined when off */
  oidc: { issuer: string, fileClients: FileClientEntry[] } | undefined
}

const MAX_FILE_CLIENTS = 1000
const MIN_SECRET_LENGTH = 32

function refused (message: string): ConfigError {
  return new ConfigError(`Invalid configuration: ${message}`)
}

/** The issuer is PUBLIC_URL exactly: OpenID Connect Discovery compares it as a string, so no trailing slash, query or fragment. */
function issuerOf (publicUrl: string | undefined): string {
  if (publicUrl === undefined) throw refused('ENABLE_OIDC_PROVIDER=true needs PUBLIC_URL (the issuer)')
  if (publicUrl.endsWith('/')) throw refused('PUBLIC_URL is the OpenID Connect issuer with ENABLE_OIDC_PROVIDER=true: write it without a trailing slash')
  return publicUrl
}

export function oidcSettings (raw: OidcRaw): OidcConfig {
  if (!raw.ENABLE_OIDC_PROVIDER) {
    if (raw.OIDC_CLIENTS_FILE !== undefined) throw refused('OIDC_CLIENTS_FILE needs ENABLE_OIDC_PROVIDER=true')
    return { oidc: undefined }
  }
  if (!raw.ENABLE_PORTAL) throw refused('ENABLE_OIDC_PROVIDER=true needs ENABLE_PORTAL=true (the sign-in and consent pages)')
  if (raw.JWT_ALG === 'HS256') throw refused('ENABLE_OIDC_PROVIDER=true needs an asymmetric JWT_ALG (ES256, EdDSA or RS256): relying parties verify ID tokens with the published keys')
  const issuer = issuerOf(raw.PUBLIC_URL)
  return { oidc: { issuer, fileClients: raw.OIDC_CLIENTS_FILE === undefined ? [] : readClientsFile(raw.OIDC_CLIENTS_FILE) } }
}

function readClientsFile (file: string): FileClientEntry[] {
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'))
  } catch (err) {
    throw refused(`OIDC_CLIENTS_FILE ${file}: ${(err as Error).message}`)
  }
  if (!Array.isArray(parsed) || parsed.length > MAX_FILE_CLIENTS) throw refused(`OIDC_CLIENTS_FILE ${file} must hold a JSON array of at most ${MAX_FILE_CLIENTS} clients`)
  const clients = parsed.map((entry, index) => fileClient(entry, `OIDC_CLIENTS_FILE ${file} [${index}]`))
  const seen = new Set<string>()
  for (const client of clients) {
    if (seen.has(client.clientId)) throw refused(`OIDC_CLIENTS_FILE ${file} names client_id ${client.clientId} twice`)
    seen.add(client.clientId)
  }
  return clients
}

function fileClient (entry: unknown, where: string): FileClientEntry {
  const error = Value.Errors(FileClient, entry).First()
  if (error !== undefined) throw refused(`${where}${error.path === '' ? '' : ` ${error.path.slice(1)}`}: ${error.message}`)
  const input = entry as Static<typeof FileClient>
  if (input.client_id === undefined) throw refused(`${where}: client_id is required in the file (the clients there are fixed)`)
  const fields = clientFields({ ...input, client_id: input.client_id })
  const failure = Object.values(clientRuleFailures(fields))[0]?.[0]
  if (failure !== undefined) throw refused(`${where} (${input.client_id}): ${failure}`)
  return { ...fields, secret: secretOf(input, fields, where) }
}

function secretOf (input: Static<typeof FileClient>, fields: ClientFields, where: string): string | undefined {
  const { client_secret_env: env, client_secret_file: file } = input
  if (fields.type === 'public') {
    if (env !== undefined || file !== undefined) throw refused(`${where} (${fields.clientId}): a public client has no secret`)
    return undefined
  }
  if ((env === undefined) === (file === undefined)) throw refused(`${where} (${fields.clientId}): a confidential client needs exactly one of client_secret_env and client_secret_file`)
  let secret: string | undefined
  if (env !== undefined) secret = process.env[env]
  else {
    try {
      secret = readFileSync(file as string, 'utf8').replace(/\r?\n$/, '')
    } catch (err) {
      throw refused(`${where} (${fields.clientId}): client_secret_file: ${(err as Error).message}`)
    }
  }
  if (secret === undefined || secret.length < MIN_SECRET_LENGTH || secret.length > 1024) {
    throw refused(`${where} (${fields.clientId}): the secret ${env !== undefined ? `in ${env}` : 'file'} must be set, ${MIN_SECRET_LENGTH} to 1024 characters`)
  }
  return secret
}
