import { readFileSync } from 'node:fs'
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { ProviderEntry } from '../../schemas/idp-providers.js'
import { ConfigError } from '../errors.js'
import { isLocalHost } from '../portal/return-url.js'
import { hostName } from './portal.js'
import { readSecretFile } from './secret-file.js'

/*
 * The settings of sign-in through external identity providers (docs/identity-providers.md): their
 * own module, spread into ConfigSchema (src/config/config.ts). Off by default; while off, no
 * /auth/idp/* route exists and the sign-in page shows no provider.
 */

export const IdpSettings = {
  ENABLE_IDP_LOGIN: Type.Boolean({
    default: false,
    description: '`true` enables sign-in through the providers of `IDP_PROVIDERS_FILE` (docs/identity-providers.md): `/auth/idp/*` ' +
      'and a link per provider on the sign-in page. Needs `ENABLE_PORTAL` and `IDP_PROVIDERS_FILE`'
  }),
  IDP_PROVIDERS_FILE: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 4096,
    examples: ['/etc/gatehouse/providers.json'],
    description: 'a JSON array of identity providers read at start (docs/identity-providers.md#the-providers-file), their secrets only by ' +
      '`client_secret_env` or `client_secret_file` (not readable by others); a `client_secret` key anywhere in it stops the start'
  }))
}

type IdpRaw = Static<ReturnType<typeof Type.Object<typeof IdpSettings>>> & { ENABLE_PORTAL: boolean, ENABLE_REGISTER: boolean }

export interface IdpProvider {
  /** in URLs (/auth/idp/<id>/…), the `idp` claim and the sign-in audit's detail `idp:<id>` */
  id: string
  type: 'oidc' | 'github'
  displayName: string
  clientId: string
  clientSecret: string
  scopes: string[]
  /** oidc: discovery at `<issuer>/.well-known/openid-configuration`, whose `issuer` must equal it exactly; github: undefined */
  issuer: string | undefined
  /** github: where /login/oauth/* live, and the REST API (no trailing slash) */
  githubUrl: string
  githubApiUrl: string
  /** lower-case domain names an upstream email must be in; empty = any */
  allowedDomains: string[]
  allowSignup: boolean
  linkPolicy: 'never' | 'after_login' | 'auto_verified'
  /** upstream claim (github: a field of /user) → its values → the roles each grants */
  roleMapping: { claim: string, values: Record<string, string[]> } | undefined
  satisfiesMfa: boolean
}

export interface IdpConfig {
  /** ENABLE_IDP_LOGIN: the providers of IDP_PROVIDERS_FILE, in the file's order; undefined when off */
  idp: { providers: IdpProvider[] } | undefined
}

const MAX_PROVIDERS = 32
const DEFAULT_SCOPES = { oidc: ['openid', 'email', 'profile'], github: ['read:user', 'user:email'] }

function refused (message: string): ConfigError {
  return new ConfigError(`Invalid configuration: ${message}`)
}

export function idpSettings (raw: IdpRaw, production: boolean): IdpConfig {
  if (!raw.ENABLE_IDP_LOGIN) {
    if (raw.IDP_PROVIDERS_FILE !== undefined) throw refused('IDP_PROVIDERS_FILE needs ENABLE_IDP_LOGIN=true')
    return { idp: undefined }
  }
  if (!raw.ENABLE_PORTAL) throw refused('ENABLE_IDP_LOGIN=true needs ENABLE_PORTAL=true (the sign-in page and the callback pages)')
  if (raw.IDP_PROVIDERS_FILE === undefined) throw refused('ENABLE_IDP_LOGIN=true needs IDP_PROVIDERS_FILE (the providers)')
  return { idp: { providers: readProvidersFile(raw.IDP_PROVIDERS_FILE, { allowSignup: raw.ENABLE_REGISTER, production }) } }
}

interface Defaults { allowSignup: boolean, production: boolean }

function readProvidersFile (file: string, defaults: Defaults): IdpProvider[] {
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'))
  } catch (err) {
    throw refused(`IDP_PROVIDERS_FILE ${file}: ${(err as Error).message}`)
  }
  const secretAt = pathOfKey(parsed, 'client_secret', '')
  if (secretAt !== undefined) {
    throw refused(`IDP_PROVIDERS_FILE ${file} holds a client_secret (at ${secretAt}): name the secret by client_secret_env or client_secret_file instead, and change it, as it has been written down`)
  }
  if (!Array.isArray(parsed) || parsed.length === 0 || parsed.length > MAX_PROVIDERS) {
    throw refused(`IDP_PROVIDERS_FILE ${file} must hold a JSON array of 1 to ${MAX_PROVIDERS} providers`)
  }
  const providers = parsed.map((entry, index) => providerOf(entry, `IDP_PROVIDERS_FILE ${file} [${index}]`, defaults))
  const seen = new Set<string>()
  for (const provider of providers) {
    if (seen.has(provider.id)) throw refused(`IDP_PROVIDERS_FILE ${file} names the provider id ${provider.id} twice`)
    seen.add(provider.id)
  }
  return providers
}

/** Where a key of that name sits at any depth (a JSON pointer), so a secret pasted anywhere is caught. */
function pathOfKey (value: unknown, key: string, path: string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  for (const [name, child] of Object.entries(value)) {
    const here = `${path}/${name}`
    if (name === key) return here
    const below = pathOfKey(child, key, here)
    if (below !== undefined) return below
  }
  return undefined
}

function providerOf (entry: unknown, where: string, defaults: Defaults): IdpProvider {
  const error = Value.Errors(ProviderEntry, entry).First()
  if (error !== undefined) throw refused(`${where}${error.path === '' ? '' : ` ${error.path.slice(1)}`}: ${error.message}`)
  const input = entry as ProviderEntry
  const at = `${where} (${input.id})`
  const scopes = scopesOf(input, at)
  const github = input.type === 'github'
  if (github && input.issuer !== undefined) throw refused(`${at}: issuer is for type oidc; a github provider takes github_url and github_api_url`)
  if (!github && (input.github_url !== undefined || input.github_api_url !== undefined)) throw refused(`${at}: github_url and github_api_url are for type github`)
  if (!github && input.issuer === undefined) throw refused(`${at}: a provider of type oidc needs its issuer`)
  return {
    id: input.id,
    type: input.type,
    displayName: input.display_name.trim(),
    clientId: input.client_id,
    clientSecret: secretOf(input, at),
    scopes,
    issuer: github ? undefined : httpsUrl(input.issuer as string, `${at}: issuer`, defaults.production),
    githubUrl: httpsUrl(input.github_url ?? 'https://github.com', `${at}: github_url`, defaults.production).replace(/\/+$/, ''),
    githubApiUrl: httpsUrl(input.github_api_url ?? 'https://api.github.com', `${at}: github_api_url`, defaults.production).replace(/\/+$/, ''),
    allowedDomains: (input.allowed_domains ?? []).map((domain) => domainOf(domain, at)),
    allowSignup: input.allow_signup ?? defaults.allowSignup,
    linkPolicy: input.link_policy ?? 'after_login',
    roleMapping: input.role_mapping,
    satisfiesMfa: input.satisfies_mfa ?? false
  }
}

function scopesOf (input: ProviderEntry, at: string): string[] {
  const given = typeof input.scopes === 'string' ? input.scopes.split(' ').filter((s) => s !== '') : input.scopes
  const scopes = given ?? DEFAULT_SCOPES[input.type]
  if (typeof input.scopes === 'string' && !Value.Check(ProviderEntry.properties.scopes, [...new Set(scopes)])) {
    throw refused(`${at}: scopes must be scope tokens separated by single spaces`)
  }
  // without openid there is no ID token, and the ID token is what proves who signed in
  if (input.type === 'oidc' && !scopes.includes('openid')) throw refused(`${at}: the scopes of an oidc provider include openid`)
  return [...new Set(scopes)]
}

/** The issuer exactly as written (discovery compares it as a string); https, or http for a loopback host outside production. */
function httpsUrl (value: string, what: string, production: boolean): string {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw refused(`${what} must be an absolute URL: ${JSON.stringify(value)} is not one`)
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') throw refused(`${what} must have no credentials, query or fragment`)
  if (url.protocol !== 'https:' && (production || url.protocol !== 'http:' || !isLocalHost(url.hostname))) {
    throw refused(`${what} must be https (http only for a loopback or localhost host outside production)`)
  }
  return value
}

function domainOf (value: string, at: string): string {
  const domain = hostName(value)
  if (domain === undefined || !domain.includes('.')) throw refused(`${at}: allowed_domains lists domain names (example.com): ${JSON.stringify(value)} is not one`)
  return domain
}

function secretOf (input: ProviderEntry, at: string): string {
  const { client_secret_env: env, client_secret_file: file } = input
  if ((env === undefined) === (file === undefined)) throw refused(`${at}: name the client secret by exactly one of client_secret_env and client_secret_file`)
  let secret: string | undefined
  if (env !== undefined) secret = process.env[env]
  else {
    try {
      secret = readSecretFile(file as string, `client_secret_file of ${input.id}`, 'make it readable by its owner only (chmod 600)')?.replace(/\r?\n$/, '')
    } catch (err) {
      if (err instanceof ConfigError) throw err
      throw refused(`${at}: client_secret_file: ${(err as Error).message}`)
    }
    if (secret === undefined) throw refused(`${at}: client_secret_file ${file as string} does not exist`)
  }
  if (secret === undefined || secret === '' || secret.length > 1024) {
    throw refused(`${at}: the client secret ${env !== undefined ? `in ${env}` : 'file'} must be set, 1 to 1024 characters`)
  }
  return secret
}
