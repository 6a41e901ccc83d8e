import t from 'tap'
import { countRedirect, LOOP_LIMIT, LOOP_WINDOW } from '../../../src/portal/loop-guard.js'

const NOW = 1_800_000_000_500

/** Redirects one after another, each with the cookie the one before set. */
function run (times: number, start?: string, step = 1000): ReturnType<typeof countRedirect>[] {
  const results: ReturnType<typeof countRedirect>[] = []
  let cookie = start
  for (let i = 0; i < times; i++) {
    const counted = countRedirect(cookie, NOW + i * step)
    results.push(counted)
    cookie = counted.cookie
  }
  return results
}

t.test('the first redirect starts a window of 30 s; three pass, the fourth within the window is a loop', async (t) => {
  t.equal(LOOP_LIMIT, 3)
  t.equal(LOOP_WINDOW, 30)
  const [first, second, third, fourth] = run(4)
  t.strictSame(first, { count: 1, looping: false, cookie: '1.1800000000', maxAge: 30 })
  t.strictSame(second, { count: 2, looping: false, cookie: '2.1800000000', maxAge: 29 })
  t.strictSame(third, { count: 3, looping: false, cookie: '3.1800000000', maxAge: 28 })
  t.strictSame(fourth, { count: 4, looping: true, cookie: '4.1800000000', maxAge: 27 })
})

t.test('after the window the count starts again (the negative control of the loop)', async (t) => {
  const slow = run(6, undefined, 11_000)
  t.strictSame(slow.map((r) => r.looping), [false, false, false, false, false, false], 'one redirect every 11 s: never four within 30 s')
  t.strictSame(slow.map((r) => r.count), [1, 2, 3, 1, 2, 3])
  const late = countRedirect('3.1800000000', NOW + 30_000)
  t.strictSame(late, { count: 1, looping: false, cookie: '1.1800000030', maxAge: 30 }, 'exactly 30 s later is a new window')
  const inside = countRedirect('3.1800000000', NOW + 29_000)
  t.equal(inside.looping, true, '29 s later is the same window')
})

t.test('a forged cookie can only stop its own browser: garbage, a future start or a huge count', async (t) => {
  for (const cookie of ['', 'x', '3', '3.abc', 'NaN.1800000000', '.', '-5.1800000000', '3.18e9']) {
    t.equal(countRedirect(cookie, NOW).looping, false, JSON.stringify(cookie))
  }
  t.strictSame(countRedirect('3.1800000100', NOW), { count: 1, looping: false, cookie: '1.1800000000', maxAge: 30 }, 'a start in the future is no window')
  t.strictSame(countRedirect('99999.1800000000', NOW), { count: 4, looping: true, cookie: '4.1800000000', maxAge: 30 }, 'a huge count is capped')
  t.equal(countRedirect('3.1799999999', NOW).maxAge, 29)
  t.equal(countRedirect('3.1799999971', NOW).maxAge, 1, 'at least one second')
})
