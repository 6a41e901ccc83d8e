/** Nearest-rank percentile of an ascending array (0 when empty). */
export function percentile (sorted: number[], p: number): number {
  if (sorted.length === 0) return 0
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] ?? 0
}

/** The median of a few numbers (the benchmark's three rounds). */
export function median (values: number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50)
}
