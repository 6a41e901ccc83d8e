import { Eta } from '../node_modules/eta/dist/index.mjs'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
const DIR = '/work/main/src/portal/templates'
const eta = new Eta({ cache: true })
function load (file: string) {
  const src = readFileSync(join(DIR, file), 'utf8').replace(/include\('([^']+)'/g, "include('@$1'").replace(/layout\('([^']+)'\)/g, "layout('@$1')")
  eta.loadTemplate('@' + file.replace(/\.eta$/, ''), src)
}
for (const f of readdirSync(DIR)) if (f.endsWith('.eta')) load(f)
for (const f of readdirSync(join(DIR, 'partials'))) load('partials/' + f)
const data = { portalTitle: 'gatehouse', base: '/portal', assets: { style: '/portal/assets/style.abc.css' }, scripts: [], notice: undefined, error: undefined, errors: {}, form: {}, links: [{ href: 'https://auth.example.com/portal/register?rd=x', text: 'Create an account' }], heading: 'Sign in', rd: 'https://auth.example.com/portal/account', csrf: 'UEbGnWaPsWZI_EbCAPha3cxrARbnjw7sI5olpEwGHrU', wide: false }
const out = eta.render('@login', data)
for (let i = 0; i < 2000; i++) eta.render('@login', data)
const N = 20000
let t0 = process.hrtime.bigint()
for (let i = 0; i < N; i++) eta.render('@login', data)
console.log('named µs', Number(process.hrtime.bigint() - t0) / N / 1000, out.length)
const e2 = new Eta({ views: DIR, cache: true })
for (let i = 0; i < 2000; i++) e2.render('login', data)
t0 = process.hrtime.bigint()
for (let i = 0; i < N; i++) e2.render('login', data)
console.log('file µs', Number(process.hrtime.bigint() - t0) / N / 1000)
