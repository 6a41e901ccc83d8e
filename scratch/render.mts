import { Eta } from '../node_modules/eta/dist/index.mjs'
import { TEMPLATES_DIR } from '/work/main/src/portal/files.js'
const eta = new Eta({ views: TEMPLATES_DIR, cache: true })
const data = { portalTitle: 'gatehouse', base: '/portal', assets: { style: '/portal/assets/style.abc.css' }, scripts: [], notice: undefined, error: undefined, errors: {}, form: {}, links: [{ href: 'https://auth.example.com/portal/register?rd=x', text: 'Create an account' }], heading: 'Sign in', rd: 'https://auth.example.com/portal/account', csrf: 'UEbGnWaPsWZI_EbCAPha3cxrARbnjw7sI5olpEwGHrU', wide: false }
for (let i = 0; i < 2000; i++) eta.render('login', data)
let t0 = process.hrtime.bigint()
const N = 20000
for (let i = 0; i < N; i++) eta.render('login', data)
console.log('eta.render login µs', Number(process.hrtime.bigint() - t0) / N / 1000)
