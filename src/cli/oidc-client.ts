import { Ajv } from 'ajv'
import { CreateClientRequest } from '../../schemas/oidc-clients.js'
import type { ClientView } from '../oidc/clients.js'
import { clientBody } from '../oidc/presenter.js'
import type { OidcServices } from '../oidc/provider.js'
import { addRules, toValidationFailed } from '../validation/index.js'
import type { CommandGroup } from './command.js'
import type { CliContext } from './context.js'
import { Failure } from './failure.js'

// the API's own rules: a client the command line makes is one the API would have accepted
const validate = addRules(new Ajv({ allErrors: true, strict: true, strictTypes: false, coerceTypes: false })).compile<CreateClientRequest>(CreateClientRequest)

function providerOf (cli: CliContext): OidcServices {
  if (cli.services.oidc === undefined) throw new Failure('the OpenID Connect provider is off: set ENABLE_OIDC_PROVIDER=true (docs/oidc.md)')
  return cli.services.oidc
}

function requestOf (values: Record<string, unknown>): CreateClientRequest {
  const list = (name: string) => values[name] as string[] | undefined
  const request = {
    ...(values['client-id'] !== undefined && { client_id: values['client-id'] }),
    name: values.name,
    type: values.public === true ? 'public' : 'confidential',
    redirect_uris: list('redirect-uri') ?? [],
    ...(list('post-logout-redirect-uri') !== undefined && { post_logout_redirect_uris: list('post-logout-redirect-uri') }),
    ...(list('scope') !== undefined && { scopes: list('scope') }),
    ...(list('allowed-role') !== undefined && { allowed_roles: list('allowed-role') }),
    ...(list('grant') !== undefined && { grant_types: list('grant') }),
    ...(list('role') !== undefined && { roles: list('role') }),
    ...(values['require-aal2'] === true && { require_aal2: true }),
    ...(values['skip-consent'] === true && { skip_consent: true })
  }
  if (!validate(request)) {
    throw toValidationFailed(validate.errors ?? [], { context: 'body', data: request, withDetails: false, schema: CreateClientRequest })
  }
  return request
}

function clientLine (client: ClientView): string {
  const flags = [client.type, client.disabled && 'disabled', client.readOnly && 'read-only (OIDC_CLIENTS_FILE)'].filter(Boolean).join(', ')
  return `${client.clientId}  ${client.name}  (${flags})  ${client.redirectUris.join(' ')}`
}

const CREATE_OPTIONS = {
  name: { type: 'string' },
  'client-id': { type: 'string' },
  'redirect-uri': { type: 'string', multiple: true },
  'post-logout-redirect-uri': { type: 'string', multiple: true },
  public: { type: 'boolean', default: false },
  scope: { type: 'string', multiple: true },
  'allowed-role': { type: 'string', multiple: true },
  'require-aal2': { type: 'boolean', default: false },
  'skip-consent': { type: 'boolean', default: false },
  grant: { type: 'string', multiple: true },
  role: { type: 'string', multiple: true }
} as const

/** gatehouse oidc-client create|list|rotate-secret|delete: the provider's clients (docs/oidc.md#the-command-line) */
export const oidcClientGroup: CommandGroup = {
  name: 'oidc-client',
  commands: {
    create: {
      usage: 'oidc-client create --name <n> --redirect-uri <u>... [--post-logout-redirect-uri <u>]... [--public] [--scope <s>]... ' +
        '[--allowed-role <r>]... [--require-aal2] [--skip-consent] [--grant <g>]... [--role <r>]... [--client-id <id>]',
      summary: 'create a client; a confidential one\'s secret is printed this once',
      options: CREATE_OPTIONS,
      required: ['name', 'redirect-uri'],
      help: [
        '--public          a public client (no secret; PKCE alone); default confidential',
        '--scope <s>       openid, profile, email, roles, offline_access (repeatable; default openid profile email)',
        '--grant <g>       authorization_code, refresh_token, client_credentials (repeatable; default authorization_code)',
        '--role <r>        a role of its client_credentials tokens (repeatable)',
        '--allowed-role <r>  who may authorize it (repeatable; none: anyone)',
        '--client-id <id>  its id (default: generated)'
      ],
      async run ({ values }, context) {
        const request = requestOf(values)
        const cli = await context()
        const { client, secret } = await providerOf(cli).admin.create(request, cli.requester)
        const body = { ...clientBody(client, cli.config.accessTtl), ...(secret !== undefined && { client_secret: secret }) }
        const text = `created client ${client.clientId}${secret === undefined ? ' (public: no secret)' : `\nclient_secret: ${secret}\n(shown this once: store it now)`}`
        return { text, json: body }
      }
    },
    list: {
      usage: 'oidc-client list',
      summary: 'list the clients: OIDC_CLIENTS_FILE\'s, then the database\'s',
      async run (_input, context) {
        const cli = await context()
        const clients = await providerOf(cli).clients.list()
        return { text: clients.length === 0 ? 'no clients' : clients.map(clientLine).join('\n'), json: { data: clients.map((c) => clientBody(c, cli.config.accessTtl)) } }
      }
    },
    'rotate-secret': {
      usage: 'oidc-client rotate-secret <client_id>',
      summary: 'a new secret, printed this once; the old one is refused at once',
      positionals: ['<client_id>'],
      async run ({ positionals }, context) {
        const cli = await context()
        const clientId = positionals[0] as string
        const secret = await providerOf(cli).admin.rotateSecret(clientId, cli.requester)
        return { text: `client_secret: ${secret}\n(shown this once: store it now)`, json: { client_secret: secret } }
      }
    },
    delete: {
      usage: 'oidc-client delete <client_id>',
      summary: 'delete a client: its grants and sessions end',
      positionals: ['<client_id>'],
      async run ({ positionals }, context) {
        const cli = await context()
        const clientId = positionals[0] as string
        await providerOf(cli).admin.remove(clientId, cli.requester)
        return { text: `deleted client ${clientId}`, json: { deleted: clientId } }
      }
    }
  }
}
