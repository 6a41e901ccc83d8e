import type { CommandGroup } from './command.js'

/** gatehouse migrate */
export const migrateGroup: CommandGroup = {
  name: 'migrate',
  commands: {
    '': {
      usage: 'migrate',
      summary: 'apply the database migrations (DATABASE_URL) and exit',
      async run (_input, context) {
        // opening the database migrates it (as the server does at start); what it applied is reported
        const { migrated } = await context()
        return { text: migrated.length === 0 ? 'database is up to date' : `applied ${migrated.join(', ')}`, json: { applied: migrated } }
      }
    }
  }
}
