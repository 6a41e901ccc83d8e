import { Type } from '@sinclair/typebox'

/*
 * Durations and rates as settings are written (`15m`, `10/h`): their schemas and their parsing,
 * in one place for every settings module (src/config*.ts).
 */

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 }

/** The schema pattern of a duration setting: seconds, or a number with `s`, `m`, `h` or `d`. */
export const DURATION_PATTERN = '^[0-9]+[smhd]?$'

/** A duration setting, with its default when it has one. */
export const durationSetting = (description: string, value?: string) => Type.String({
  pattern: DURATION_PATTERN,
  maxLength: 16,
  ...(value !== undefined && { default: value }),
  description: `${description}. Seconds, or a number with \`s\`, \`m\`, \`h\` or \`d\``
})

/** A rate setting: requests per second, minute or hour. */
export const rateSetting = (description: string, value: string) => Type.String({
  pattern: '^[0-9]+/[smh]$',
  maxLength: 16,
  default: value,
  description: `${description}. Written \`<count>/<s|m|h>\``
})

/** '15m' → 900. A bare number is seconds. */
export function parseDuration (value: string): number {
  const unit = value.at(-1) ?? ''
  const factor = UNIT_SECONDS[unit]
  return factor === undefined ? Number(value) : Number(value.slice(0, -1)) * factor
}

/** '10/h' → { max: 10, windowSeconds: 3600 } */
export function parseRate (value: string): { max: number, windowSeconds: number } {
  const [count = '0', unit = 's'] = value.split('/')
  return { max: Number(count), windowSeconds: UNIT_SECONDS[unit] ?? 1 }
}
