/**
 * A URL's origin as browsers compare them (`http://localhost:80` and `http://localhost` are one);
 * undefined for a value that is no URL or has an opaque origin (`null`: a `data:` or sandboxed page).
 */
export function originOf (value: string): string | undefined {
  try {
    const origin = new URL(value).origin
    return origin === 'null' ? undefined : origin
  } catch {
    return undefined
  }
}
