import type { KeyEntry } from '../keys/key-service.js'
import { signingKeyRepresentation } from '../http/presenters.js'
import type { CommandGroup } from './command.js'

function keyLine (key: KeyEntry): string {
  return `${key.kid}  ${key.alg}  ${key.state}  created ${key.createdAt}  ${key.activatesAt === null ? 'standby (signs once promoted)' : `signs from ${key.activatesAt}`}${key.retiresAt === null ? '' : `  gone at ${key.retiresAt}`}`
}

/** gatehouse keys list|rotate|revoke <kid>: the signing keys of access tokens (docs/keys.md) */
export const keysGroup: CommandGroup = {
  name: 'keys',
  commands: {
    list: {
      usage: 'keys list',
      summary: 'list the signing keys not yet gone, oldest first (none under JWT_ALG=HS256)',
      async run (_input, context) {
        const keys = await (await context()).services.keys.list()
        return { text: keys.length === 0 ? 'no signing keys (JWT_ALG=HS256 signs with JWT_SECRET)' : keys.map(keyLine).join('\n'), json: { data: keys.map(signingKeyRepresentation) } }
      }
    },
    rotate: {
      usage: 'keys rotate',
      summary: 'create the next signing key: published now, signing after JWT_KEY_PUBLISH_LEAD',
      async run (_input, context) {
        const cli = await context()
        const key = await cli.services.keys.rotate(cli.requester.context)
        return { text: `created ${key.kid} (${key.alg}), signing from ${key.activatesAt ?? 'its promotion'}`, json: signingKeyRepresentation(key) }
      }
    },
    revoke: {
      usage: 'keys revoke <kid>',
      summary: 'revoke a key: unpublished at once, its tokens refused by every running server within a second',
      positionals: ['<kid>'],
      async run ({ positionals }, context) {
        const cli = await context()
        const kid = positionals[0] as string
        await cli.services.keys.revoke(kid, cli.requester.context)
        return { text: `revoked ${kid}`, json: { revoked: kid } }
      }
    }
  }
}
