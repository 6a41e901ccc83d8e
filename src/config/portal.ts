import { Type, type Static } from '@sinclair/typebox'
import { ConfigError } from '../errors.js'
import { checkReturnUrl, isLocalHost, type ReturnUrlRules } from '../portal/return-url.js'

/*
 * The settings of the browser sign-in pages (docs/portal.md): their own module, spread into
 * ConfigSchema (src/config/config.ts). Off by default; while off, nothing under /portal/ exists.
 */

export const PortalSettings = {
  ENABLE_PORTAL: Type.Boolean({
    default: false,
    description: '`true` serves the sign-in pages under `/portal/` (docs/portal.md). Needs `PUBLIC_URL` on https ' +
      '(http only for `localhost`, `*.localhost` or a loopback address outside production); in production also `DATA_ENCRYPTION_KEYS`'
  }),
  PORTAL_TITLE: Type.String({ default: 'gatehouse', minLength: 1, maxLength: 60, description: 'the name in every page\'s title and heading' }),
  COOKIE_DOMAIN: Type.Optional(Type.String({
    minLength: 3,
    maxLength: 253,
    examples: ['example.com'],
    description: 'every `access_token` cookie gets `Domain=<it>`, so apps on its subdomains receive it; `PUBLIC_URL`\'s host must ' +
      'be it or end in `.<it>`; at least two labels'
  })),
  PORTAL_RETURN_HOSTS: Type.Optional(Type.String({
    maxLength: 4096,
    examples: ['app.example.net,admin.example.org'],
    description: 'comma-separated exact host names also allowed as return targets (besides `PUBLIC_URL`\'s host and `COOKIE_DOMAIN` with its subdomains)'
  })),
  PORTAL_DEFAULT_RETURN_URL: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 2048,
    examples: ['https://app.example.com/'],
    description: 'where a missing or refused return URL goes; must itself be an allowed return URL. Unset: `<PUBLIC_URL>/portal/account`'
  })),
  FORWARD_AUTH_REDIRECT: Type.Boolean({
    default: false,
    description: '`true`: `/auth/verify` sends a browser navigation without a valid session to the sign-in page (docs/proxies.md). Needs `ENABLE_PORTAL`'
  })
}

type PortalRaw = Static<ReturnType<typeof Type.Object<typeof PortalSettings>>>

export interface PortalConfig {
  /** ENABLE_PORTAL; undefined when off */
  portal: (ReturnUrlRules & { title: string, defaultReturnUrl: string, forwardAuthRedirect: boolean }) | undefined
  /** COOKIE_DOMAIN: the Domain of every access_token cookie */
  cookieDomain: string | undefined
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

/** A host name as the URL parser normalises one: lower case, no trailing dot; undefined when it is not one. */
export function hostName (value: string): string | undefined {
  let host: string
  try {
    host = new URL(`http://${value}/`).hostname
  } catch {
    return undefined
  }
  host = host.replace(/\.$/, '')
  return host === value.toLowerCase().replace(/\.$/, '') && host.split('.').every((label) => LABEL.test(label)) ? host : undefined
}

function needs (setting: string, other: string): ConfigError {
  return new ConfigError(`Invalid configuration: ${setting} needs ${other}`)
}

function publicUrlOf (publicUrl: string | undefined, production: boolean): URL {
  if (publicUrl === undefined) throw needs('ENABLE_PORTAL=true', 'PUBLIC_URL')
  const url = new URL(publicUrl)
  if (url.protocol !== 'https:' && (production || !isLocalHost(url.hostname))) {
    throw new ConfigError('Invalid configuration: ENABLE_PORTAL=true needs PUBLIC_URL on https (http only for localhost, *.localhost or a loopback address outside production): its cookies are Secure')
  }
  return url
}

function cookieDomainOf (raw: PortalRaw, publicUrl: string | undefined): string | undefined {
  if (raw.COOKIE_DOMAIN === undefined) return undefined
  const domain = hostName(raw.COOKIE_DOMAIN.replace(/^\./, ''))
  if (domain === undefined || !domain.includes('.')) throw new ConfigError('Invalid configuration: COOKIE_DOMAIN must be a host name of at least two labels (example.com)')
  if (publicUrl === undefined) throw needs('COOKIE_DOMAIN', 'PUBLIC_URL')
  const host = new URL(publicUrl).hostname
  if (host !== domain && !host.endsWith(`.${domain}`)) throw new ConfigError(`Invalid configuration: PUBLIC_URL's host ${host} must be COOKIE_DOMAIN or end in .${domain}`)
  return domain
}

function returnHostsOf (value: string | undefined): Set<string> {
  const hosts = new Set<string>()
  for (const entry of (value ?? '').split(',').map((h) => h.trim()).filter((h) => h !== '')) {
    const host = hostName(entry)
    if (host === undefined) throw new ConfigError('Invalid configuration: PORTAL_RETURN_HOSTS lists host names (no scheme, port or path), comma-separated')
    hosts.add(host)
  }
  return hosts
}

/** The portal's settings; the default return URL is held to the rule every other return URL is. */
export function portalSettings (raw: PortalRaw & { PUBLIC_URL?: string | undefined }, production: boolean): PortalConfig {
  const publicUrl = raw.PUBLIC_URL?.replace(/\/+$/, '')
  const cookieDomain = cookieDomainOf(raw, publicUrl)
  if (raw.FORWARD_AUTH_REDIRECT && !raw.ENABLE_PORTAL) throw needs('FORWARD_AUTH_REDIRECT=true', 'ENABLE_PORTAL=true')
  if (!raw.ENABLE_PORTAL) return { portal: undefined, cookieDomain }
  const url = publicUrlOf(publicUrl, production)
  const rules: ReturnUrlRules = {
    publicUrl: publicUrl as string,
    publicHost: url.hostname.replace(/\.$/, ''),
    cookieDomain,
    returnHosts: returnHostsOf(raw.PORTAL_RETURN_HOSTS),
    production
  }
  const wanted = raw.PORTAL_DEFAULT_RETURN_URL ?? `${rules.publicUrl}/portal/account`
  const defaultReturnUrl = checkReturnUrl(wanted, rules)
  if (defaultReturnUrl === undefined) {
    throw new ConfigError('Invalid configuration: PORTAL_DEFAULT_RETURN_URL must be an allowed return URL (docs/portal.md#return-urls): https, on PUBLIC_URL\'s host, COOKIE_DOMAIN or PORTAL_RETURN_HOSTS')
  }
  return {
    portal: { ...rules, title: raw.PORTAL_TITLE, defaultReturnUrl, forwardAuthRedirect: raw.FORWARD_AUTH_REDIRECT },
    cookieDomain
  }
}
