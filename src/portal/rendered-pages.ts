import { randomBytes } from 'node:crypto'

/**
 * The sign-in page as most browsers first see it is the same HTML but for its CSRF token: each
 * rendering is kept once, cut around a placeholder where the token goes, so the next browser gets
 * two string joins instead of a template run (docs/benchmarks.md#sign-in-pages). Keyed by the
 * whole model; bounded (the oldest rendering goes first), since a return URL or a login hint is
 * anyone's to choose.
 */
export class RenderedPages {
  // random, so no value a request chooses can contain it; a rendering holding it twice is not kept
  readonly placeholder = randomBytes(32).toString('base64url')
  private readonly pages = new Map<string, readonly [string, string]>()

  constructor (private readonly limit = 256) {}

  /** The page for `key` with `token` in place, rendering it (with the placeholder) when not kept yet. */
  render (key: string, token: string, render: (placeholder: string) => string): string {
    let parts = this.pages.get(key)
    if (parts === undefined) {
      const html = render(this.placeholder)
      const at = html.indexOf(this.placeholder)
      if (at === -1 || html.indexOf(this.placeholder, at + 1) !== -1) return html.replaceAll(this.placeholder, token)
      parts = [html.slice(0, at), html.slice(at + this.placeholder.length)]
      if (this.pages.size >= this.limit) this.pages.delete(this.pages.keys().next().value as string)
      this.pages.set(key, parts)
    }
    return parts[0] + token + parts[1]
  }
}
