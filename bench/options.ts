/**
 * The benchmark's options, from `key=value` arguments or BENCH_* variables (arguments win):
 *   duration=10   seconds per measured run            (BENCH_DURATION)
 *   rounds=3      alternating rounds, medians reported (BENCH_ROUNDS)
 *   scenarios=…   protected,protected-p1,me,me-p1,login,verify,chain,peers,portal-login,verify-redirect,
 *                 login-bcrypt,verify-key,protected-key,oidc-userinfo,userinfo-floor,oidc-code (BENCH_SCENARIOS)
 *   setups=…      sqlite,postgres,workers,es256,eddsa,portal,api-keys,oidc  (BENCH_SETUPS)
 *   processes=1   fresh server processes per setup, one after another; figures are medians over
 *                 all their rounds, and the ratio's spread over the processes is shown (BENCH_PROCESSES)
 * e.g. `npm run bench -- duration=5 rounds=1 scenarios=protected,me setups=sqlite`.
 * `peers` runs two hand-written comparison servers (bench/peers.ts) once per run, in the
 * setups that list it (sqlite): reported against the same bare ceiling, never judged.
 * `userinfo-floor` (oidc setup) runs userinfo's floor (bench/userinfo-floor.ts), likewise reported.
 */
export const SCENARIOS = ['protected', 'protected-p1', 'me', 'me-p1', 'login', 'verify', 'chain', 'peers', 'portal-login', 'verify-redirect', 'login-bcrypt', 'verify-key', 'protected-key', 'oidc-userinfo', 'userinfo-floor', 'oidc-code'] as const
export const SETUPS = ['sqlite', 'postgres', 'workers', 'es256', 'eddsa', 'portal', 'api-keys', 'oidc'] as const
export type ScenarioId = typeof SCENARIOS[number]
export type SetupId = typeof SETUPS[number]

export interface Options {
  seconds: number
  rounds: number
  processes: number
  scenarios: ScenarioId[]
  setups: SetupId[]
}

export class OptionError extends Error {}

function argument (argv: string[], key: string): string | undefined {
  const prefix = `${key}=`
  return argv.find((a) => a.startsWith(prefix) || a.startsWith(`--${prefix}`))?.split('=').slice(1).join('=')
}

function integer (name: string, raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1 || value > max) throw new OptionError(`${name} must be a whole number from 1 to ${max}`)
  return value
}

function list<T extends string> (name: string, raw: string | undefined, allowed: readonly T[]): T[] {
  if (raw === undefined || raw === '' || raw === 'all') return [...allowed]
  const picked = raw.split(',').map((s) => s.trim()).filter(Boolean)
  const unknown = picked.filter((p) => !(allowed as readonly string[]).includes(p))
  if (unknown.length > 0 || picked.length === 0) throw new OptionError(`${name}: unknown ${unknown.join(', ') || '(none)'}; choose from ${allowed.join(', ')}`)
  return allowed.filter((a) => picked.includes(a))
}

export function parseOptions (argv: string[], env: NodeJS.ProcessEnv): Options {
  const known = ['duration', 'rounds', 'processes', 'scenarios', 'setups']
  const stray = argv.filter((a) => !known.some((k) => a.startsWith(`${k}=`) || a.startsWith(`--${k}=`)))
  if (stray.length > 0) throw new OptionError(`unknown argument ${stray.join(' ')}; use ${known.map((k) => `${k}=…`).join(' ')}`)
  return {
    seconds: integer('duration', argument(argv, 'duration') ?? env.BENCH_DURATION, 10, 600),
    rounds: integer('rounds', argument(argv, 'rounds') ?? env.BENCH_ROUNDS, 3, 50),
    processes: integer('processes', argument(argv, 'processes') ?? env.BENCH_PROCESSES, 1, 20),
    scenarios: list('scenarios', argument(argv, 'scenarios') ?? env.BENCH_SCENARIOS, SCENARIOS),
    setups: list('setups', argument(argv, 'setups') ?? env.BENCH_SETUPS, SETUPS)
  }
}
