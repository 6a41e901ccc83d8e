#!/usr/bin/env node
/**
 * `npm start`'s build step (prestart): runs `npm run build` only when the sources differ from the
 * ones dist/ was built from, so a second start with unchanged sources starts at once instead of
 * spending ~25 s in tsc (even `tsc --incremental` re-reads the whole program to find nothing
 * changed). Plain JavaScript on purpose: it runs before anything is compiled.
 *
 * dist/ was built from sources whose digest is in dist/.sources-digest, written after a successful
 * build. The digest covers what tsc reads: every file under the tsconfig's folders (by path and
 * content, so an edit, a new file, a deletion or a branch switch all count, whatever the clocks),
 * tsconfig.json and package-lock.json (the types of the dependencies).
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '..')
const FOLDERS = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')).include
const FILES = ['tsconfig.json', 'package-lock.json']
const DIGEST = join(ROOT, 'dist', '.sources-digest')

function sourcesDigest () {
  const hash = createHash('sha256')
  const files = [...FILES]
  for (const folder of FOLDERS) {
    for (const entry of readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) files.push(join(entry.parentPath, entry.name).slice(ROOT.length + 1))
    }
  }
  for (const file of files.sort()) {
    let content
    try { content = readFileSync(join(ROOT, file)) } catch { content = Buffer.alloc(0) }
    hash.update(`${file}\0${content.length}\0`).update(content)
  }
  return hash.digest('hex')
}

function builtDigest () {
  try { return readFileSync(DIGEST, 'utf8') } catch { return undefined }
}

const digest = sourcesDigest()
if (builtDigest() === digest) {
  console.log('dist/ is up to date with the sources: no build')
} else {
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' })
  if (build.status !== 0) process.exit(build.status ?? 1)
  // the digest of the sources as they were when the build began: an edit made during it rebuilds next time
  writeFileSync(DIGEST, digest)
}
