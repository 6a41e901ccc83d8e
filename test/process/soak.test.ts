import { test } from 'tap'
import { runSoak, type SoakLimits } from '../../bench/soak.js'
import { benchPoolSize } from '../../bench/servers.js'

/**
 * The short run's bounds. RSS may grow 10 % from 10 s in (the 10-minute soak holds 5 % from minute 2;
 * measured from 4 s, 20 s runs grew 5–14 %, V8's young generation still growing to its size). The read p99 does
 * not hold at 20 ms on a shared 2-core box running other test files: 20 s runs there, at load
 * averages of 15–18, saw 480 and 880 ms, so here it only catches a stall (a read stuck for
 * seconds behind a blocked event loop); `npm run soak` keeps the strict 20 ms. No 5xx stays
 * strict here too, although at a load average of 24 one run saw under-pressure shed requests
 * (503 when the event loop lags over 1 s): the report then says so, so such a failure reads as
 * the box, not as a bug.
 */
const SHORT_LIMITS: SoakLimits = { rssGrowth: 0.10, readP99Ms: 2000 }

test('a 20 s soak: no server errors, every write readable, memory and read latency bounded', async (t) => {
  const result = await runSoak({ durationMs: 20_000, limits: SHORT_LIMITS })
  t.comment(result.text)
  t.strictSame(result.checks.map((c) => ({ name: c.name, ok: c.ok })), [
    { name: 'no 5xx responses', ok: true },
    { name: 'no network errors or timeouts', ok: true },
    { name: 'every status the one the flow expects', ok: true },
    { name: 'every acknowledged write readable at the end', ok: true },
    { name: 'RSS growth from 10 s to the end < 10 %', ok: true },
    { name: 'p99 of /api reads during the login storm < 2000 ms', ok: true },
    { name: `argon2 pool saturated: ≥ ${benchPoolSize()} logins in flight at ≥ 90 % of the samples`, ok: true },
    { name: 'no error lines in the server log', ok: true },
    { name: 'server ran throughout and exited cleanly on SIGTERM', ok: true }
  ], result.text)
  t.equal(result.ok, true)
  // every flow ran: each kind of request was sent, and only the statuses the flows expect came back
  t.strictSame([...result.recorder.kinds.keys()].sort(), ['create', 'delete', 'list', 'login', 'login-wrong', 'logout', 'me', 'read', 'refresh', 'update', 'verify'])
  t.strictSame([...result.recorder.statuses.keys()].sort(), ['200', '201', '204', '401', '403', '404'])
  t.equal(result.verification.listTotal, result.verification.expectedTotal)
  t.ok(result.verification.deleted > 0, 'some users were deleted and checked to be gone')
})
