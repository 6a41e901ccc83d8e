import t from 'tap'
import { createUser, login, PASSWORD } from '../../helper.js'
import { BREACHED, blocklistFile, FRESH } from '../../process/blocklist-file.js'
import { latestMail, recoveryApp, resetTokenIn } from '../auth/recovery/support.js'
import { alertCode, PAGE_HEADERS, PageClient, portalApp, portalValues, PORTAL_ORIGIN } from './support.js'

/*
 * BREACHED_PASSWORDS_FILE on the portal's pages that set a password (src/validation/not-breached.ts
 * through the JSON routes' own field schemas, schemas/portal.ts): the message shows beside its
 * field, with the other fields' messages, and the page is shown again with the JSON route's 422.
 */

const MESSAGE = (field: string) => `The ${field} field is a known breached password`
const list = blocklistFile(t, `${BREACHED}\n`)

function fieldError (html: string, name: string): string | undefined {
  return new RegExp(`<p class="field-error" id="${name}-error">([^<]*)</p>`).exec(html)?.[1]
}

t.test('/portal/register: a listed password is refused beside its field, with the name\'s message; a fresh one creates the account', async (t) => {
  const app = await portalApp(t, { ENABLE_REGISTER: true, BREACHED_PASSWORDS_FILE: await list })
  const browser = new PageClient(app)
  const bad = await browser.post('/portal/register', { name: 'N', email: 'ann@example.com', password: BREACHED })
  t.equal(bad.statusCode, 422)
  t.match(bad.headers, PAGE_HEADERS)
  t.equal(alertCode(bad.body), 'validation_failed')
  t.equal(fieldError(bad.body, 'password'), MESSAGE('password'))
  t.equal(fieldError(bad.body, 'name'), 'The name field must be at least 2 characters')
  t.equal(fieldError(bad.body, 'email'), undefined)
  t.match(bad.body, /<input id="password"[^>]* aria-invalid="true" aria-describedby="password-hint password-error">/)
  t.notOk(browser.jar.has('access_token'), 'nobody is signed in')

  const good = await browser.post('/portal/register', { name: 'Ann', email: 'ann@example.com', password: FRESH })
  t.equal(good.statusCode, 303)
  t.ok(browser.jar.has('access_token'))
})

t.test('/portal/account change password: a listed new password is refused beside new_password; the password is unchanged', async (t) => {
  const app = await portalApp(t, { BREACHED_PASSWORDS_FILE: await list })
  const user = await createUser(app)
  const browser = new PageClient(app)
  t.equal((await browser.post('/portal/login', { email: user.email, password: user.password })).statusCode, 303)
  const bad = await browser.post('/portal/account/change-password', { current_password: PASSWORD, new_password: BREACHED })
  t.equal(bad.statusCode, 422)
  t.equal(alertCode(bad.body), 'validation_failed')
  t.equal(fieldError(bad.body, 'new_password'), MESSAGE('new_password'))
  t.equal(fieldError(bad.body, 'current_password'), undefined)
  t.equal((await login(app, user)).response.statusCode, 200, 'the old password still signs in')
  const good = await browser.post('/portal/account/change-password', { current_password: PASSWORD, new_password: FRESH })
  t.equal(good.statusCode, 303)
  t.equal(good.headers.location, `${PORTAL_ORIGIN}/portal/account?done=change-password`)
})

t.test('/portal/reset: a listed new password is refused beside new_password; the same link then takes a fresh one', async (t) => {
  const app = await recoveryApp(t, portalValues({ ENABLE_EMAIL_OTP: false, PASSWORD_RESET_URL: undefined, BREACHED_PASSWORDS_FILE: await list }))
  const user = await createUser(app)
  const browser = new PageClient(app)
  t.equal((await browser.post('/portal/forgot', { email: user.email })).statusCode, 303)
  const token = resetTokenIn((await latestMail(app, user.email)).text, `${PORTAL_ORIGIN}/portal/reset#token={token}`)
  const bad = await browser.post('/portal/reset', { token, new_password: BREACHED })
  t.equal(bad.statusCode, 422)
  t.equal(alertCode(bad.body), 'validation_failed')
  t.equal(fieldError(bad.body, 'new_password'), MESSAGE('new_password'))
  t.equal((await browser.post('/portal/reset', { token, new_password: FRESH })).statusCode, 303)
  t.equal((await login(app, { email: user.email, password: FRESH })).response.statusCode, 200)
})
