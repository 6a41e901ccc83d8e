const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 }

/** The schema pattern of a duration setting: seconds, or a number with `s`, `m`, `h` or `d`. */
export const DURATION_PATTERN = '^[0-9]+[smhd]?$'

/** '15m' → 900. A bare number is seconds. */
export function parseDuration (value: string): number {
  const unit = value.at(-1) ?? ''
  const factor = UNIT_SECONDS[unit]
  return factor === undefined ? Number(value) : Number(value.slice(0, -1)) * factor
}
