import type { Recorder } from './soak-record.js'
import type { Verification } from './soak-verify.js'

export interface Check { name: string, ok: boolean, value: string }

export interface RssFigures { startMb: number, baselineMb: number, endMb: number, maxMb: number, growth: number, baselineAtMs: number }

/** Everything the report prints; the checks decide the exit code. */
export interface SoakFigures {
  durationMs: number
  clients: { users: number, admins: number, readers: number, storm: number }
  poolSize: number
  cores: number
  /** the box's 1-minute load average at the end: other work competes for the cores too */
  loadAverage: number
  recorder: Recorder
  rss: RssFigures
  reads: { count: number, p50: number, p99: number, fromMs: number }
  loginsPerSecond: number
  serverCpuBusy: number
  verification: Verification
  checks: Check[]
}

const num = (value: number, digits = 0) => value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
const clock = (ms: number) => `${Math.floor(ms / 60_000)}:${String(Math.round(ms / 1000) % 60).padStart(2, '0')}`

/** Lines of `label value` pairs, wrapped so the report stays one screen wide. */
function pairs (entries: Array<[string, number]>, indent: string): string[] {
  const lines: string[] = []
  let line = indent
  for (const [label, value] of entries) {
    const cell = `${label} ${num(value)}`
    if (line.length + cell.length > 100 && line !== indent) {
      lines.push(line.trimEnd())
      line = indent
    }
    line += cell + '   '
  }
  lines.push(line.trimEnd())
  return lines
}

export function formatReport (f: SoakFigures): string {
  const r = f.recorder
  const seconds = f.durationMs / 1000
  const { users, admins, readers, storm } = f.clients
  const v = f.verification
  const statuses = [...r.statuses.entries()].sort(([a], [b]) => a.localeCompare(b))
  const ok = f.checks.every((c) => c.ok)
  return [
    `gatehouse soak: ${clock(f.durationMs)} of load; ${users} user, ${admins} admin, ${readers} reader and ${storm} login-storm clients; ${f.cores} cores (load average ${num(f.loadAverage, 2)}), argon2 pool ${f.poolSize} threads`,
    `requests  ${num(r.total)} in all, ${num(r.total / seconds)}/s`,
    ...pairs([...r.kinds.entries()], '  '),
    'statuses',
    ...pairs(statuses, '  '),
    `RSS MB    start ${num(f.rss.startMb, 1)}   at ${clock(f.rss.baselineAtMs)} ${num(f.rss.baselineMb, 1)}   end ${num(f.rss.endMb, 1)}   max ${num(f.rss.maxMb, 1)}   growth ${f.rss.growth >= 0 ? '+' : ''}${num(f.rss.growth * 100, 1)} %`,
    `reads     ${num(f.reads.count)} /api reads from ${clock(f.reads.fromMs)}: p50 ${num(f.reads.p50, 1)} ms, p99 ${num(f.reads.p99, 1)} ms, with ${num(f.loginsPerSecond, 1)} logins/s and the server at ${num(f.serverCpuBusy * 100)} % CPU`,
    `writes    ${num(v.checked)} users written, read back at the end (${num(v.deleted)} deleted → 404); list total ${String(v.listTotal)}, expected ${v.expectedTotal}`,
    ...(f.loadAverage > f.cores
      ? [`  ! the box is oversubscribed (load average ${num(f.loadAverage, 1)} on ${f.cores} cores): latencies measure that contention as much as gatehouse`]
      : []),
    ...r.examples.map((e) => `  ! ${e}`),
    ...v.problems.map((p) => `  ! ${p}`),
    'checks',
    ...f.checks.map((c) => `  ${c.ok ? 'PASS' : 'FAIL'}  ${c.name}: ${c.value}`),
    `soak ${ok ? 'PASSED' : 'FAILED'}`
  ].join('\n')
}
