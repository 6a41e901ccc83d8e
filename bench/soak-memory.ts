import type { RssFigures } from './soak-report.js'
import { median } from './stats.js'

/** One look at the server: when (ms into the load), its RSS in MB, and the logins in flight. */
export interface Sample { t: number, rss: number, loginsInFlight: number }

const BASELINE_CAP_MS = 120_000

/**
 * Growth is measured between two medians, so one sample taken while every argon2 thread holds
 * its 19 MiB (or just freed it) does not decide it: the samples in the tenth of the run after
 * the baseline (minute 2, or the middle of a run shorter than four minutes) against those in the
 * last tenth. The baseline waits for the server to reach its working size: it starts with V8's
 * young generation at its smallest (src/runtime/young-generation.ts), and under a light load that grows
 * by up to 30 MB over the first ten seconds or so, which is warm-up, not a leak.
 */
export function rssFigures (samples: Sample[], durationMs: number): RssFigures {
  const baselineAtMs = Math.min(BASELINE_CAP_MS, 0.5 * durationMs)
  const window = Math.max(1000, 0.1 * durationMs)
  const rssIn = (from: number, to: number) => samples.filter((s) => s.t >= from && s.t <= to).map((s) => s.rss)
  const baselineMb = median(rssIn(baselineAtMs, baselineAtMs + window))
  const endMb = median(rssIn(durationMs - window, Infinity))
  return {
    startMb: samples[0]?.rss ?? 0,
    baselineMb,
    endMb,
    maxMb: Math.max(...samples.map((s) => s.rss)),
    growth: baselineMb > 0 ? endMb / baselineMb - 1 : Infinity,
    baselineAtMs
  }
}
