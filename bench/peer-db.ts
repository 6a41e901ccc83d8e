import Database from 'better-sqlite3'

/**
 * What both comparison peers (peer-fastify.ts, peer-express.ts) share: their environment and the
 * one table they read. Each peer has its own fresh SQLite file, in WAL mode as gatehouse's.
 */
export interface PeerUser { id: string, email: string, name: string, roles: string[], created_at: string }

interface Row { id: string, email: string, name: string, roles: string, created_at: string }

export interface PeerEnv { port: number, secret: string, dbFile: string, userId: string }

export function peerEnv (): PeerEnv {
  const { PORT, JWT_SECRET, DB_FILE, USER_ID } = process.env
  if (JWT_SECRET === undefined || DB_FILE === undefined || USER_ID === undefined) throw new Error('PORT, JWT_SECRET, DB_FILE and USER_ID are required')
  return { port: Number(PORT ?? 0), secret: JWT_SECRET, dbFile: DB_FILE, userId: USER_ID }
}

/** Creates the table with its one user and returns a reader by primary key, prepared once. */
export function openUsers (file: string, userId: string): (id: string) => PeerUser | undefined {
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.exec('create table users (id text primary key, email text not null unique, name text not null, roles text not null, created_at text not null)')
  db.prepare('insert into users (id, email, name, roles, created_at) values (?, ?, ?, ?, ?)')
    .run(userId, 'peer@example.com', 'Peer User', JSON.stringify(['user']), new Date().toISOString())
  const select = db.prepare<[string], Row>('select id, email, name, roles, created_at from users where id = ?')
  return (id) => {
    const row = select.get(id)
    return row === undefined ? undefined : { ...row, roles: JSON.parse(row.roles) as string[] }
  }
}
