import t from 'tap'
import { addClient, codeFor, exchange, flowApp, person, pkce, signedIn } from './flow-support.js'
t.test('smoke', async (t) => {
  const flow = await flowApp(t)
  await addClient(flow, 'web-app', { grant_types: ['authorization_code', 'refresh_token'], scopes: ['openid', 'profile', 'email', 'offline_access', 'roles'] })
  const user = await person(flow, 'ann@example.com')
  const browser = await signedIn(flow, user)
  const p = pkce()
  const code = await codeFor(flow, browser, 'web-app', p, { scope: 'openid email offline_access roles', nonce: 'n1' })
  const res = await exchange(flow, 'web-app', code, p)
  console.log(res.statusCode, res.headers, res.body)
  const body = res.json()
  const ui = await flow.app.inject({ method: 'GET', url: '/oauth2/userinfo', headers: { authorization: `Bearer ${body.access_token}` } })
  console.log(ui.statusCode, ui.body)
  const api = await flow.app.inject({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${body.access_token}` } })
  console.log(api.statusCode, api.body)
})
