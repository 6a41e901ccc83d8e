import { chmodSync, mkdirSync } from 'node:fs'

/**
 * Creates the folder that holds the database and the development secret for the service's user
 * only (0700, set explicitly: mkdir's mode is filtered by the umask). A folder that already
 * exists keeps its mode — it may be a shared one the operator chose (`.`, `/var/lib`).
 */
export function makePrivateDir (dir: string): void {
  if (mkdirSync(dir, { recursive: true, mode: 0o700 }) !== undefined) chmodSync(dir, 0o700)
}
