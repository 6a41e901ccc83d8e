import t from 'tap'
import { ConfigError, loadConfig } from '../../../src/config/config.js'
import { tempDir, TEST_SECRET } from '../../helper.js'

function load (trustProxy: string, allowWide?: boolean) {
  const values = { DATA_DIR: tempDir(t), JWT_SECRET: TEST_SECRET, TRUST_PROXY: trustProxy, ...(allowWide !== undefined && { TRUST_PROXY_ALLOW_WIDE: allowWide }) }
  return loadConfig({ fromEnvironment: false, values })
}

/** 0.0.0.0/1, 128.0.0.0/2 … 255.255.255.254/32: every IPv4 address but the last. */
function allOfIPv4But255 (): string {
  return Array.from({ length: 32 }, (_, i) => {
    const start = 2 ** 32 - 2 ** (32 - i)
    const quad = [24, 16, 8, 0].map((shift) => Math.floor(start / 2 ** shift) % 256).join('.')
    return `${quad}/${i + 1}`
  }).join(',')
}

const EVERY = (family: string) => new ConfigError(
  `Invalid configuration: TRUST_PROXY covers every ${family} address; list only the addresses or networks of your proxies`)

t.test('TRUST_PROXY ranges that together cover every address are refused, naming TRUST_PROXY', async (t) => {
  const cases: Array<[string, string]> = [
    ['0.0.0.0/0', 'IPv4'],
    ['::/0', 'IPv6'],
    ['0.0.0.0/1,128.0.0.0/1', 'IPv4'],
    ['::/1,8000::/1', 'IPv6'],
    ['10.0.0.0/8, 0.0.0.0/1, 128.0.0.0/2, 192.0.0.0/2', 'IPv4'],
    ['0.0.0.0/0.0.0.0', 'IPv4'],
    ['0.0.0.0/128.0.0.0,128.0.0.0/1', 'IPv4'],
    // proxy-addr matches an IPv4 client against an IPv4-mapped IPv6 network
    ['::ffff:0.0.0.0/97,::ffff:128.0.0.0/97', 'IPv4'],
    // IPv4-mapped clients count as IPv4, so the rest of IPv6 is everything a native client can be
    ['::/1,8000::/2,c000::/2', 'IPv6']
  ]
  for (const [value, family] of cases) {
    t.throws(() => load(value), EVERY(family), value)
    t.throws(() => load(value, true), EVERY(family), `${value}, even with TRUST_PROXY_ALLOW_WIDE=true`)
  }
})

const WIDE = (entry: string, family: string, limit: string) => new ConfigError(
  `Invalid configuration: TRUST_PROXY entry ${entry} spans more than a ${limit} of ${family} addresses, so clients inside it ` +
  'could name their own address; list only the addresses or networks of your proxies, or set TRUST_PROXY_ALLOW_WIDE=true ' +
  'if they really are spread over such a network')

t.test('a TRUST_PROXY network wider than an IPv4 /8 or an IPv6 /32 is refused unless TRUST_PROXY_ALLOW_WIDE=true', async (t) => {
  const cases: Array<[string, string, string, string]> = [
    ['0.0.0.0/1', '0.0.0.0/1', 'IPv4', '/8'],
    ['10.0.0.1, 128.0.0.0/7', '128.0.0.0/7', 'IPv4', '/8'],
    ['0.0.0.0/128.0.0.0', '0.0.0.0/128.0.0.0', 'IPv4', '/8'],
    ['2001:db8::1,2000::/3', '2000::/3', 'IPv6', '/32'],
    ['2001:d00::/31', '2001:d00::/31', 'IPv6', '/32'],
    // an IPv4-mapped network is matched as the IPv4 network it maps: ::ffff:0.0.0.0/97 is 0.0.0.0/1
    ['::ffff:0.0.0.0/97', '::ffff:0.0.0.0/97', 'IPv4', '/8']
  ]
  for (const [value, entry, family, limit] of cases) {
    t.throws(() => load(value), WIDE(entry, family, limit), value)
    t.throws(() => load(value, false), WIDE(entry, family, limit), `${value} with TRUST_PROXY_ALLOW_WIDE=false`)
    t.equal(load(value, true).trustProxy, value.split(',').map((e) => e.trim()).join(','), `${value} with TRUST_PROXY_ALLOW_WIDE=true`)
  }
  // the negative control: exactly a /8 or a /32, and anything narrower, needs no override
  for (const value of ['10.0.0.0/8', '10.0.0.0/255.0.0.0', '2001:db8::/32', '::ffff:10.0.0.0/104', '192.168.0.0/16', 'fd00::/48', '::1']) {
    t.equal(load(value).trustProxy, value, value)
  }
})

t.test('an unreadable TRUST_PROXY entry is refused, naming TRUST_PROXY and the entry', async (t) => {
  for (const entry of ['1.2.3', '10.0.0.0/33', '::/129', '10.0.0.0/255.0.255.0', '::1/ffff::', '1.2.3.4/', '::1::2']) {
    t.throws(() => load(`192.168.0.1,${entry}`),
      new ConfigError(`Invalid configuration: TRUST_PROXY has an invalid address or network: ${entry}`), entry)
  }
})

t.test('TRUST_PROXY lists that leave addresses untrusted are accepted as they are (wide ones with TRUST_PROXY_ALLOW_WIDE=true)', async (t) => {
  // the negative control: the same shapes, one address short of everything
  t.equal(load('false').trustProxy, false)
  t.equal(load('2').trustProxy, 2)
  t.equal(load('10.0.0.0/8, 192.168.0.0/16,::1').trustProxy, '10.0.0.0/8,192.168.0.0/16,::1')
  t.equal(load('0.0.0.0/1,128.0.0.0/2', true).trustProxy, '0.0.0.0/1,128.0.0.0/2')
  t.equal(load(allOfIPv4But255(), true).trustProxy, allOfIPv4But255(), 'every IPv4 address but 255.255.255.255')
  t.equal(load('10.0.0.0/255.0.0.0').trustProxy, '10.0.0.0/255.0.0.0')
  t.equal(load('::/1,8000::/2', true).trustProxy, '::/1,8000::/2')
  t.equal(load('::ffff:10.0.0.0/104').trustProxy, '::ffff:10.0.0.0/104')
})
