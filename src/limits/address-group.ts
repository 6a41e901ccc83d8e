import { isIPv6 } from 'node:net'

/**
 * The client a per-address limit counts. An IPv4 address is one client; an IPv6 client
 * usually holds a whole subnet (a /64, often a /56 or /48), so counting each of its addresses
 * would give it 2^64 budgets: IPv6 addresses are reduced to their first `prefix` bits. An IPv4
 * address seen through an IPv6 socket (`::ffff:a.b.c.d`) is that IPv4 address. Anything that
 * does not parse is counted as it is.
 */
export function addressGroup (ip: string, prefix: number): string {
  if (!ip.includes(':')) return ip
  const groups = ipv6Groups(ip)
  if (groups === undefined) return ip
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6)
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`
  }
  const masked = groups.map((group, i) => {
    const bits = Math.min(16, Math.max(0, prefix - i * 16))
    return group & (0xffff << (16 - bits)) & 0xffff
  })
  return `${masked.map((g) => g.toString(16)).join(':')}/${prefix}`
}

/** The eight 16-bit groups of an IPv6 address (zone dropped, `::` and a dotted IPv4 tail expanded). */
function ipv6Groups (address: string): number[] | undefined {
  const zone = address.indexOf('%')
  let ip = zone === -1 ? address : address.slice(0, zone)
  if (!isIPv6(ip)) return undefined
  const lastColon = ip.lastIndexOf(':')
  if (ip.includes('.', lastColon)) {
    const [a = 0, b = 0, c = 0, d = 0] = ip.slice(lastColon + 1).split('.').map(Number)
    ip = `${ip.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = '', tail] = ip.split('::')
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)))
  const first = parse(head)
  if (tail === undefined) return first
  const last = parse(tail)
  return [...first, ...new Array<number>(8 - first.length - last.length).fill(0), ...last]
}
