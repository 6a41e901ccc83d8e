import { isIPv4, isIPv6 } from 'node:net'
import { Type } from '@sinclair/typebox'
import { ConfigError } from '../errors.js'

export const TrustProxySettings = {
  TRUST_PROXY_ALLOW_WIDE: Type.Boolean({
    default: false,
    description: '`true` accepts `TRUST_PROXY` networks wider than an IPv4 /8 or an IPv6 /32 (refused otherwise: every ' +
      'client inside such a network could name its own address); lists that cover every address stay refused'
  })
}

interface Network { family: 4 | 6, mapped: boolean, prefix: bigint, start: bigint, end: bigint }

const MAPPED_START = 0xffffn << 32n // ::ffff:0.0.0.0, where IPv4-mapped IPv6 addresses begin
const MAPPED_PREFIX = 96n
const IPV4_BITS = 32n
const IPV6_BITS = 128n
const WIDEST = { 4: 8n, 6: 32n } as const

/**
 * A list that trusts every client address would let any client name its own address in
 * X-Forwarded-For and dodge every per-address limit, so it is refused.
 */
export function parseTrustProxy (value: string, allowWide = false): false | number | string {
  if (value === 'false') return false
  if (/^[0-9]+$/.test(value)) return Number(value)
  const entries = value.split(',').map((a) => a.trim()).filter(Boolean)
  const networks = entries.map(parseEntry)
  refuseEverything(networks)
  if (!allowWide) entries.forEach((entry, i) => { refuseWide(entry, networks[i]) })
  return entries.join(',')
}

/** A network far wider than any proxy fleet trusts mostly clients: refused unless meant. */
function refuseWide (entry: string, network: Network | undefined): void {
  if (network === undefined) return
  const ipv4 = network.family === 4 || network.mapped
  const prefix = network.mapped ? network.prefix - MAPPED_PREFIX : network.prefix
  if (prefix < 0n) return
  const [family, limit] = ipv4 ? ['IPv4', WIDEST[4]] : ['IPv6', WIDEST[6]]
  if (prefix >= limit) return
  throw new ConfigError(`Invalid configuration: TRUST_PROXY entry ${entry} spans more than a /${limit} of ${family} addresses, ` +
    'so clients inside it could name their own address; list only the addresses or networks of your proxies, ' +
    'or set TRUST_PROXY_ALLOW_WIDE=true if they really are spread over such a network')
}

function invalid (entry: string): ConfigError {
  return new ConfigError(`Invalid configuration: TRUST_PROXY has an invalid address or network: ${entry}`)
}

function parseEntry (entry: string): Network {
  const slash = entry.indexOf('/')
  const address = slash === -1 ? entry : entry.slice(0, slash)
  const suffix = slash === -1 ? undefined : entry.slice(slash + 1)
  const family = isIPv4(address) ? 4 : isIPv6(address) ? 6 : undefined
  if (family === undefined) throw invalid(entry)
  const bits = family === 4 ? IPV4_BITS : IPV6_BITS
  const prefix = suffix === undefined ? bits : prefixOf(suffix, family)
  if (prefix === undefined || prefix > bits) throw invalid(entry)
  const hostBits = bits - prefix
  const value = family === 4 ? ipv4ToBigInt(address) : ipv6ToBigInt(address)
  const start = (value >> hostBits) << hostBits
  const mapped = family === 6 && value >> IPV4_BITS === 0xffffn
  return { family, mapped, prefix, start, end: start + (1n << hostBits) - 1n }
}

function prefixOf (suffix: string, family: 4 | 6): bigint | undefined {
  if (/^[0-9]{1,3}$/.test(suffix)) return BigInt(suffix)
  if (family !== 4 || !isIPv4(suffix)) return undefined
  const binary = ipv4ToBigInt(suffix).toString(2).padStart(32, '0')
  const ones = binary.indexOf('0') === -1 ? 32 : binary.indexOf('0')
  return binary.includes('1', ones) ? undefined : BigInt(ones)
}

function ipv4ToBigInt (address: string): bigint {
  return address.split('.').reduce((n, octet) => (n << 8n) + BigInt(octet), 0n)
}

function ipv6ToBigInt (address: string): bigint {
  let text = address
  const dot = text.indexOf('.')
  if (dot !== -1) { // a trailing dotted quad is the last two groups
    const colon = text.lastIndexOf(':')
    const v4 = ipv4ToBigInt(text.slice(colon + 1))
    text = `${text.slice(0, colon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`
  }
  const [head = '', tail] = text.split('::')
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
  return groups.reduce((n, group) => (n << 16n) + BigInt(`0x${group}`), 0n)
}

/** As proxy-addr matches: a mapped network shorter than /96 matches no one. */
function refuseEverything (networks: Network[]): void {
  type Range = Pick<Network, 'start' | 'end'>
  const v4: Range[] = []
  // native IPv6 clients are never in the mapped block: it counts as covered
  const v6: Range[] = [{ start: MAPPED_START, end: MAPPED_START + (1n << IPV4_BITS) - 1n }]
  for (const network of networks) {
    if (network.family === 4) v4.push(network)
    else if (!network.mapped) v6.push(network)
    else if (network.prefix >= MAPPED_PREFIX) v4.push({ start: network.start - MAPPED_START, end: network.end - MAPPED_START })
  }
  for (const [family, list, bits] of [['IPv4', v4, IPV4_BITS], ['IPv6', v6, IPV6_BITS]] as const) {
    if (coversAll(list, bits)) {
      throw new ConfigError(`Invalid configuration: TRUST_PROXY covers every ${family} address; list only the addresses or networks of your proxies`)
    }
  }
}

function coversAll (networks: Array<Pick<Network, 'start' | 'end'>>, bits: bigint): boolean {
  let next = 0n
  for (const { start, end } of [...networks].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0))) {
    if (start > next) return false
    if (end + 1n > next) next = end + 1n
  }
  return next >= 1n << bits
}
