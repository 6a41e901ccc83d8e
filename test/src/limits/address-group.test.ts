import t from 'tap'
import { addressGroup } from '../../../src/limits/address-group.js'

t.test('an IPv4 address is its own group', async (t) => {
  t.equal(addressGroup('203.0.113.5', 64), '203.0.113.5')
})

t.test('an IPv6 address is reduced to its first IPV6_SUBNET_PREFIX bits, whatever its spelling', async (t) => {
  const group = '2001:db8:1:2:0:0:0:0/64'
  for (const ip of ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::', '2001:DB8:1:2:ffff::1', '2001:0db8:0001:0002:0000:0000:0000:0001']) {
    t.equal(addressGroup(ip, 64), group, ip)
  }
  t.equal(addressGroup('2001:db8:1:3::1', 64), '2001:db8:1:3:0:0:0:0/64', 'the next /64 is another group')
  t.equal(addressGroup('2001:db8:0:12ab::1', 56), '2001:db8:0:1200:0:0:0:0/56', 'a prefix inside a group of 16 bits')
  t.equal(addressGroup('2001:db8::1', 128), '2001:db8:0:0:0:0:0:1/128')
  t.equal(addressGroup('a001::1', 1), '8000:0:0:0:0:0:0:0/1')
  t.equal(addressGroup('fe80::1%eth0', 64), 'fe80:0:0:0:0:0:0:0/64', 'a zone is dropped')
  t.equal(addressGroup('64:ff9b::192.0.2.1', 128), '64:ff9b:0:0:0:0:c000:201/128', 'a dotted tail is read as two groups')
})

t.test('an IPv4-mapped IPv6 address is the IPv4 client, not one /64 shared by every IPv4 client', async (t) => {
  t.equal(addressGroup('::ffff:198.51.100.4', 64), '198.51.100.4')
  t.equal(addressGroup('::ffff:c633:6404', 64), '198.51.100.4')
})

t.test('what does not parse is counted as it is', async (t) => {
  t.equal(addressGroup('1:2', 64), '1:2')
  t.equal(addressGroup('unknown', 64), 'unknown')
})
