import { tracingChannel } from 'node:diagnostics_channel'
import { Kysely, sql } from 'kysely'
import { ApiKeyRepository } from './api-keys.js'
import { AuditEventRepository } from './audit-events.js'
import { IdentityRepository } from './identities.js'
import { MailOutboxRepository } from './mail-outbox.js'
import { OauthCodeRepository } from './oauth-codes.js'
import { OauthInteractionRepository } from './oauth-interactions.js'
import { OauthClientRepository } from './oauth-clients.js'
import { OauthGrantRepository } from './oauth-grants.js'
import { migrateToLatest } from './migrations.js'
import { OneTimeSecretRepository } from './one-time-secrets.js'
import { PasskeyRepository } from './passkeys.js'
import { RevocationRepository } from './revocations.js'
import type { Database } from './schema.js'
import { SigningKeyRepository } from './signing-keys.js'
import { SessionRepository } from './sessions.js'
import { TotpRepository } from './totp.js'
import { UserRepository, type ImmediateUserRows } from './users.js'
import { WebauthnChallengeRepository } from './webauthn-challenges.js'

/** The one storage seam: services never see which database is behind it. */
export interface Store {
  readonly kind: 'sqlite' | 'postgres'
  readonly users: UserRepository
  readonly sessions: SessionRepository
  readonly revocations: RevocationRepository
  readonly auditEvents: AuditEventRepository
  readonly signingKeys: SigningKeyRepository
  /** enqueue on the transaction that writes what the mail is about */
  readonly mailOutbox: MailOutboxRepository
  readonly oneTimeSecrets: OneTimeSecretRepository
  readonly totp: TotpRepository
  readonly passkeys: PasskeyRepository
  readonly webauthnChallenges: WebauthnChallengeRepository
  readonly apiKeys: ApiKeyRepository
  readonly identities: IdentityRepository
  readonly oauthInteractions: OauthInteractionRepository
  readonly oauthCodes: OauthCodeRepository
  readonly oauthClients: OauthClientRepository
  readonly oauthGrants: OauthGrantRepository
  transaction<T> (fn: (tx: Store) => Promise<T>): Promise<T>
  migrate (): Promise<string[]>
  ping (): Promise<void>
  close (): Promise<void>
}

/** Traced as Fastify and undici trace: an observer can tell what runs while a transaction holds SQLite's one connection. */
export const transactionChannel = tracingChannel<unknown, { store: Store }>('gatehouse:db.transaction')

class KyselyStore implements Store {
  readonly users: UserRepository
  readonly sessions: SessionRepository
  readonly revocations: RevocationRepository
  readonly auditEvents: AuditEventRepository
  readonly signingKeys: SigningKeyRepository
  readonly mailOutbox: MailOutboxRepository
  readonly oneTimeSecrets: OneTimeSecretRepository
  readonly totp: TotpRepository
  readonly passkeys: PasskeyRepository
  readonly webauthnChallenges: WebauthnChallengeRepository
  readonly apiKeys: ApiKeyRepository
  readonly identities: IdentityRepository
  readonly oauthInteractions: OauthInteractionRepository
  readonly oauthCodes: OauthCodeRepository
  readonly oauthClients: OauthClientRepository
  readonly oauthGrants: OauthGrantRepository

  constructor (readonly kind: Store['kind'], private readonly db: Kysely<Database>, usersByIds?: ImmediateUserRows) {
    this.users = new UserRepository(db, kind === 'postgres', usersByIds)
    this.sessions = new SessionRepository(db, kind === 'postgres')
    this.revocations = new RevocationRepository(db)
    this.auditEvents = new AuditEventRepository(db)
    this.signingKeys = new SigningKeyRepository(db)
    this.mailOutbox = new MailOutboxRepository(db, kind === 'postgres')
    this.oneTimeSecrets = new OneTimeSecretRepository(db, kind === 'postgres')
    this.totp = new TotpRepository(db)
    this.passkeys = new PasskeyRepository(db, kind === 'postgres')
    this.webauthnChallenges = new WebauthnChallengeRepository(db)
    this.apiKeys = new ApiKeyRepository(db)
    this.identities = new IdentityRepository(db)
    this.oauthInteractions = new OauthInteractionRepository(db)
    this.oauthCodes = new OauthCodeRepository(db)
    this.oauthClients = new OauthClientRepository(db)
    this.oauthGrants = new OauthGrantRepository(db)
  }

  async transaction<T> (fn: (tx: Store) => Promise<T>): Promise<T> {
    if (this.db.isTransaction) return await fn(this)
    const run = async () => await this.db.transaction().execute(async (trx) => await fn(new KyselyStore(this.kind, trx)))
    return transactionChannel.hasSubscribers ? await transactionChannel.tracePromise(run, { store: this }) : await run()
  }

  async migrate () {
    return await migrateToLatest(this.db as Kysely<unknown>, this.kind)
  }

  async ping () {
    await sql`select 1`.execute(this.db)
  }

  async close () {
    await this.db.destroy()
  }
}

export interface ConnectOptions {
  poolMax?: number
  onError?: (err: Error) => void
}

export async function connect (url: string, options: ConnectOptions = {}): Promise<Store> {
  if (url.startsWith('sqlite:')) {
    const { openSqlite } = await import('./sqlite.js')
    const { dialect, usersByIds } = openSqlite(url.slice('sqlite:'.length))
    return new KyselyStore('sqlite', new Kysely<Database>({ dialect }), usersByIds)
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    const { createPostgresDialect } = await import('./postgres.js')
    return new KyselyStore('postgres', new Kysely<Database>({ dialect: createPostgresDialect(url, options) }))
  }
  throw new Error(`Unsupported DATABASE_URL scheme: ${url.split(':')[0]}`)
}
