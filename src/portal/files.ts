import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Eta } from 'eta'

/**
 * The portal's templates and assets are files of the package, not of the build: found from the
 * package root, so `tsx` on the sources and `node dist/…` read the same folder.
 */
function packageRoot (): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error('the portal cannot find the package root')
    dir = parent
  }
  return dir
}

const PORTAL = join(packageRoot(), 'src', 'portal')
export const TEMPLATES_DIR = join(PORTAL, 'templates')
export const ASSETS_DIR = join(PORTAL, 'assets')

/** `style.css` → `style.3f9a0c1b2d.css`: a name that changes with the content, so no browser keeps a stale copy. */
export function hashedAssetNames (): Map<string, string> {
  const names = new Map<string, string>()
  for (const file of readdirSync(ASSETS_DIR)) {
    const hash = createHash('sha256').update(readFileSync(join(ASSETS_DIR, file))).digest('hex').slice(0, 10)
    const dot = file.lastIndexOf('.')
    names.set(file, `${file.slice(0, dot)}.${hash}${file.slice(dot)}`)
  }
  return names
}

let names: Map<string, string> | undefined

/** The URL path of an asset under the portal's `base` path, by its hashed name (the files are read once). */
export function assetPath (base: string, file: string): string {
  names ??= hashedAssetNames()
  return `${base}/assets/${names.get(file) ?? file}`
}

/**
 * Every template, compiled once as a named Eta template (`@login`, `@partials/field`): a page
 * and its includes are then found by name, without the path resolution and file cache lookup a
 * file template costs at each include. Eta escapes every `<%= %>` (autoEscape is its default).
 */
export function portalTemplates (): Eta {
  const eta = new Eta({ autoEscape: true })
  const load = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = join(dir, entry.name)
      if (entry.isDirectory()) load(file)
      else if (entry.name.endsWith('.eta')) eta.loadTemplate(`@${relative(TEMPLATES_DIR, file).replace(/\.eta$/, '')}`, readFileSync(file, 'utf8'))
    }
  }
  load(TEMPLATES_DIR)
  return eta
}
