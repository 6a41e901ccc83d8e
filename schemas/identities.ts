import { Type, type Static } from '@sinclair/typebox'
import { Password, ref, Timestamp, Uuid } from './common.js'
import { portalForm } from './portal.js'

/*
 * The upstream identities linked to a user (docs/identity-providers.md#connected-accounts): listed,
 * and disconnected by the user (recent authentication) or an admin. How one is linked is the
 * sign-in flow's (/auth/idp/*), outside the JSON API.
 */

export const Identity = Type.Object({
  id: Uuid,
  provider: Type.String({ description: 'the provider\'s `id` in IDP_PROVIDERS_FILE' }),
  display_name: Type.String({ description: 'the provider\'s `display_name`; its `id` when it is no longer in the file' }),
  email: Type.Union([Type.String(), Type.Null()], { description: 'the upstream email at the last sign-in through it (verified or not); null when the provider gave none' }),
  created_at: Timestamp,
  last_login_at: Type.Union([Timestamp, Type.Null()], { description: 'the last sign-in through it; null until one' })
}, { $id: 'Identity', description: 'An account at an external identity provider, connected to this one: it signs the user in' })
export type Identity = Static<typeof Identity>

export const IdentityList = Type.Object({ data: Type.Array(ref(Identity)) }, { $id: 'IdentityList', description: 'Oldest first' })

export const IdentityParams = Type.Object({ id: Uuid }, { additionalProperties: false })
export type IdentityParams = Static<typeof IdentityParams>
export const UserIdentityParams = Type.Object({ id: Uuid, identity_id: Uuid }, { additionalProperties: false })
export type UserIdentityParams = Static<typeof UserIdentityParams>

export const RemoveIdentityRequest = Type.Object({
  password: Type.Optional(Password)
}, { additionalProperties: false, description: 'The password, unless the sign-in is recent (REAUTH_MAX_AGE)' })
export type RemoveIdentityRequest = Static<typeof RemoveIdentityRequest>

/** The account page's disconnect form: which identity, and the password when the sign-in is not recent (empty means absent). */
export const IdentityRemoveForm = portalForm({ identity: Uuid, password: Type.Optional(Type.String({ maxLength: 1024 })) })
