import type { Sample } from './measure.js'
import { median } from './stats.js'

/** A scenario (gatehouse's or a peer's) and the ceiling measured next to it, round by round. */
export interface Outcome {
  name: string
  load: string
  ceilingName: string
  /** the least acceptable req/s ratio to the ceiling; undefined: reported, not judged */
  target: number | undefined
  /** false for a comparison peer, whose RSS is not gatehouse's */
  gatehouse: boolean
  /** the sign-in storm: argon2's memory, judged apart from the reads */
  login: boolean
  rounds: Array<{ ceiling: Sample, subject: Sample }>
  /** with processes=N: the median ratio of each fresh server process, in order */
  processRatios?: number[]
}

/** The most RSS (MB) gatehouse may hold after start-up, after the read runs, and after the sign-in storm. */
export interface RssTargets { start: number, reads: number, login: number }

export interface SetupReport {
  title: string
  outcomes: Outcome[]
  rssTargets: RssTargets | undefined
  rssAtStartMb: number
  /** the server's process tree (WORKERS) */
  processes: number
  /** with processes=N: how many fresh servers were measured one after another */
  freshProcesses?: number
}

export interface RunInfo { seconds: number, rounds: number, cores: number, load: string, command: string }

const num = (value: number, digits = 0) => value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
const times = (value: number) => Number.isFinite(value) ? `×${num(value, 2)}` : '×–'
// autocannon's latency histogram counts whole milliseconds
const ms = (value: number) => value < 1 ? '<1' : num(value)

/** The median of a metric, and the median of its per-round ratio to the ceiling. */
function figure (outcome: Outcome, pick: (s: Sample) => number): { subject: number, ceiling: number, ratio: number } {
  return {
    subject: median(outcome.rounds.map((r) => pick(r.subject))),
    ceiling: median(outcome.rounds.map((r) => pick(r.ceiling))),
    ratio: median(outcome.rounds.map((r) => pick(r.subject) / pick(r.ceiling)))
  }
}

const HEADERS = ['scenario', 'c×p', 'req/s', 'ratio', 'target', 'p50 ms', 'p99 ms', 'CPU µs/req', 'RSS MB', 'bad']

/** A run with failed requests meets no target: a refusal is cheaper than an answer. */
function verdict (ratio: number, target: number | undefined, failed: boolean): string {
  if (target === undefined) return '(reported)'
  return `≥ ${num(target, 2)} ${ratio >= target && !failed ? '✅' : '❌'}`
}

/** The lowest and highest of the per-process ratios, when several fresh processes were measured. */
function spread (ratios: number[] | undefined): string {
  if (ratios === undefined || ratios.length < 2) return ''
  return ` (${num(Math.min(...ratios), 2)}–${num(Math.max(...ratios), 2)})`
}

function rows (outcome: Outcome): string[][] {
  const rps = figure(outcome, (s) => s.rps)
  const p50 = figure(outcome, (s) => s.p50)
  const p99 = figure(outcome, (s) => s.p99)
  const cpu = figure(outcome, (s) => s.cpuUs)
  const rss = figure(outcome, (s) => s.rssMb)
  const bad = (pick: (r: Outcome['rounds'][number]) => Sample) => num(outcome.rounds.reduce((n, r) => n + pick(r).bad, 0))
  return [
    [
      outcome.name, outcome.load, num(rps.subject), `**${times(rps.ratio)}**${spread(outcome.processRatios)}`, verdict(rps.ratio, outcome.target, outcome.rounds.some((r) => r.subject.bad > 0)),
      `${ms(p50.subject)} (${times(p50.ratio)})`, `${ms(p99.subject)} (${times(p99.ratio)})`,
      `${num(cpu.subject, 1)} (${times(cpu.ratio)})`, `${num(rss.subject)} (${times(rss.ratio)})`, bad((r) => r.subject)
    ],
    [
      `↳ ceiling: ${outcome.ceilingName}`, outcome.load, num(rps.ceiling), '', '',
      ms(p50.ceiling), ms(p99.ceiling), num(cpu.ceiling, 1), num(rss.ceiling), bad((r) => r.ceiling)
    ]
  ]
}

/** A markdown table, padded so it also reads as plain text. */
function table (lines: string[][]): string {
  const widths = HEADERS.map((_, i) => Math.max(3, ...lines.map((l) => (l[i] ?? '').length)))
  const right = new Set([2, 3, 5, 6, 7, 8, 9])
  const cells = (line: string[]) => `| ${line.map((cell, i) => right.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)).join(' | ')} |`
  const rule = `|${widths.map((w, i) => right.has(i) ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2)).join('|')}|`
  const [head = [], ...body] = lines
  return [cells(head), rule, ...body.map(cells)].join('\n')
}

const judge = (mb: number, target: number | undefined) => `${num(mb)} MB${target === undefined ? '' : ` (≤ ${target} ${mb <= target ? '✅' : '❌'})`}`

/**
 * gatehouse's RSS after start-up, after the read runs of the first round (no sign-in storm yet:
 * the scenarios run reads first) and at the most after any run, the storms included.
 */
function rssLine (setup: SetupReport): string {
  const targets = setup.rssTargets
  const parts = [`after start-up ${judge(setup.rssAtStartMb, targets?.start)}`]
  const ours = setup.outcomes.filter((o) => o.gatehouse)
  const reads = ours.filter((o) => !o.login).flatMap((o) => o.rounds.slice(0, 1).map((r) => r.subject.rssMb))
  if (reads.length > 0) parts.push(`after the reads ${judge(Math.max(...reads), targets?.reads)}`)
  const storms = ours.filter((o) => o.login).flatMap((o) => o.rounds.map((r) => r.subject.rssMb))
  if (storms.length > 0) parts.push(`after the sign-in storms ${judge(Math.max(...storms), targets?.login)}`)
  return `gatehouse RSS: ${parts.join('; ')}.`
}

function section (setup: SetupReport): string {
  const fresh = setup.freshProcesses === undefined ? '' : ` Fresh servers measured one after another: ${setup.freshProcesses}; the ratio's range in brackets is the lowest and highest of their medians.`
  return [`### ${setup.title}`, '', `Server processes: ${setup.processes}.${fresh}`, '', table([HEADERS, ...setup.outcomes.flatMap(rows)]), '', rssLine(setup)].join('\n')
}

/** The tables, the RSS verdicts, and how to read them. */
export function report (setups: SetupReport[], info: RunInfo): string {
  const anyBad = setups.some((s) => s.outcomes.some((o) => o.rounds.some((r) => r.subject.bad > 0 || r.ceiling.bad > 0)))
  return [
    '',
    `\`npm run bench${info.command ? ` -- ${info.command}` : ''}\`: ${info.rounds} round(s) of ${info.seconds} s per run, ceiling and scenario alternating; ${info.cores} cores, load average ${info.load} at the end.`,
    '',
    ...setups.flatMap((s) => [section(s), '']),
    'Figures are medians of the rounds; every ratio (×) is the median of the per-round ratios to the ceiling measured just before it.',
    'CPU µs/req: the server\'s user+system time (/proc/<pid>/stat, summed over its process tree) during the run and the drain after it, over the requests sent. RSS: VmRSS after the run.',
    'GET /api/users/:id is a plain user reading themself: token check, the self rule, one database read, the response schema. /auth/me is the same, outside /api.',
    'peer: a minimal hand-written server doing less than that (HS256 check, one SQLite read by primary key; no headers, no access rule), for scale; its RSS is its own.',
    'Each login verifies argon2id (m=19456, t=2, p=1) and writes a session; its ceiling is argon2 verify alone, in its own process, at the same concurrency and thread pool.',
    'Latency is autocannon\'s, in whole milliseconds (×– when the ceiling is under 1 ms).',
    'bad = non-2xx responses + connection errors + timeouts' + (anyBad ? ' — SOME RUNS HAD FAILURES: their figures are not comparable.' : ' (none).'),
    ''
  ].join('\n')
}
