import pino from 'pino'
import t from 'tap'
import { LazyChildLogger, lazyChildLoggerFactory } from '../../../src/logging/lazy-logger.js'

/** A pino logger writing its lines into an array, and counting the children made from it. */
function recording () {
  const lines: Record<string, unknown>[] = []
  const logger = pino({ level: 'info', redact: { paths: ['req.headers.authorization'], censor: '[redacted]' } }, { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>) } })
  let children = 0
  const child = logger.child
  // on the parent, and so inherited by its children (pino's children are made from their parent)
  logger.child = function (this: typeof logger, ...args: Parameters<typeof logger.child>) { children++; return child.apply(this, args) } as typeof logger.child
  return { logger, lines, children: () => children }
}

t.test('a request logger that never writes makes no pino child', async (t) => {
  const { logger, lines, children } = recording()
  const lazy = lazyChildLoggerFactory(logger, { reqId: 'r1' }, {})
  t.ok(lazy instanceof LazyChildLogger)
  t.equal(lazy.level, 'info', 'the level is the parent\'s until a child exists')
  lazy.silent('nothing')
  t.equal(children(), 0)
  t.same(lines, [])
})

t.test('its lines are the ones a pino child writes, bindings and redaction included', async (t) => {
  const { logger, lines, children } = recording()
  const lazy = lazyChildLoggerFactory(logger, { reqId: 'r2' }, {})
  lazy.info({ req: { headers: { authorization: 'Bearer secret' } } }, 'first')
  lazy.warn('second %s', 'line')
  lazy.error({ code: 'x' }, 'third')
  lazy.debug('below the level')
  lazy.trace('below the level')
  lazy.fatal('fourth')
  t.equal(children(), 1, 'one child, made at the first line')
  t.same(lines.map(({ level, reqId, msg }) => ({ level, reqId, msg })), [
    { level: 30, reqId: 'r2', msg: 'first' },
    { level: 40, reqId: 'r2', msg: 'second line' },
    { level: 50, reqId: 'r2', msg: 'third' },
    { level: 60, reqId: 'r2', msg: 'fourth' }
  ])
  t.same(lines[0]?.req, { headers: { authorization: '[redacted]' } })
  lazy.level = 'debug'
  t.equal(lazy.level, 'debug')
  lazy.debug('now written')
  t.equal(lines.at(-1)?.msg, 'now written')
  lazy.child({ extra: 1 }).info('grandchild')
  t.same({ reqId: lines.at(-1)?.reqId, extra: lines.at(-1)?.extra }, { reqId: 'r2', extra: 1 })
})
