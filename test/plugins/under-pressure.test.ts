// Proves plugins/security.ts (@fastify/under-pressure).
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { build } from '../helper.js'

/** Keeps the event loop busy, as a flood of synchronous work would. */
function blockEventLoop (ms: number): void {
  const end = Date.now() + ms
  while (Date.now() < end);
}

t.test('a saturated event loop sheds requests with 503 and Retry-After, then recovers', async (t) => {
  const app = await build(t, { MAX_EVENT_LOOP_DELAY: 100 })
  t.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200, 'served before the lag')

  // under-pressure samples the mean loop delay once a second, so one long block can be averaged
  // away by the quick ticks of the same window on a loaded machine: keep the loop saturated
  // until a sample sees it (bounded: four seconds of blocking at most)
  let shed = await app.inject({ method: 'GET', url: '/auth/me' })
  for (let i = 0; i < 16 && shed.statusCode !== 503; i++) {
    blockEventLoop(250)
    await sleep(1)
    shed = await app.inject({ method: 'GET', url: '/auth/me' })
  }
  t.equal(shed.statusCode, 503)
  t.equal(shed.headers['retry-after'], '10')
  t.same(shed.json(), { error: 'Service Unavailable', message: 'The service is temporarily unavailable', code: 'service_unavailable' })

  await sleep(2100)
  const recovered = await app.inject({ method: 'GET', url: '/health' })
  t.equal(recovered.statusCode, 200, 'served again once the loop is idle')
})

t.test('MAX_EVENT_LOOP_DELAY=0 never sheds', async (t) => {
  const app = await build(t, { MAX_EVENT_LOOP_DELAY: 0 })
  blockEventLoop(1500)
  await sleep(20)
  t.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200)
})
