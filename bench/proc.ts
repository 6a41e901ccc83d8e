import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (100 on Linux almost always). */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8', timeout: 2000 }).trim()) || 100
  } catch {
    return 100
  }
})()

function read (file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    // the process (or a thread of it) ended between the listing and the read
    return undefined
  }
}

/**
 * The process and its live descendants: with WORKERS=N the requests are served by forked
 * workers, and a dead child's time only reaches the parent's cutime once it is reaped.
 */
export function processTree (pid: number): number[] {
  const pids = [pid]
  for (let i = 0; i < pids.length; i++) {
    let tasks: string[] = []
    try {
      tasks = readdirSync(`/proc/${pids[i]}/task`)
    } catch {
      continue
    }
    for (const task of tasks) {
      const children = read(`/proc/${pids[i]}/task/${task}/children`)?.trim()
      if (children) pids.push(...children.split(' ').map(Number))
    }
  }
  return pids
}

/** CPU seconds (user + system) one process has used so far. */
function cpuOf (pid: number): number {
  const stat = read(`/proc/${pid}/stat`)
  if (stat === undefined) return 0
  // the command name may hold spaces: fields are counted after its closing parenthesis
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // utime and stime are fields 14 and 15 of proc(5), i.e. 11 and 12 after the name
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
}

/** Resident set size of one process in MB (VmRSS of /proc/<pid>/status). */
function rssOf (pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(read(`/proc/${pid}/status`) ?? '')?.[1]
  return kb === undefined ? 0 : Number(kb) / 1024
}

/** CPU seconds (user + system) the process and its descendants have used so far. */
export function cpuSeconds (pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + cpuOf(p), 0)
}

/** Resident set size of the process and its descendants, in MB. */
export function rssMb (pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + rssOf(p), 0)
}
