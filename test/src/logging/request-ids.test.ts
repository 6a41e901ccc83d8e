import t from 'tap'
import { requestIdGenerator } from '../../../src/logging/request-ids.js'
import { UUID } from '../../patterns.js'

t.test('request ids are UUID-shaped, all different, and another generator starts from another base', async (t) => {
  const next = requestIdGenerator()
  const ids = Array.from({ length: 10_000 }, () => next())
  t.equal(ids.filter((id) => UUID.test(id)).length, ids.length, 'every id has the UUID form')
  t.equal(new Set(ids).size, ids.length, 'no id twice')
  const other = requestIdGenerator()()
  t.not(other.slice(0, 24), ids[0]?.slice(0, 24), 'a second generator (another process) draws its own base')
  t.equal(ids[1]?.slice(24), '000000000001', 'the count runs in the last 12 digits')
})
