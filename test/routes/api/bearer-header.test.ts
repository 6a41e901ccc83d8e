// Proves src/http/credentials.ts.
import t from 'tap'
import { build, createUser, login, regexInputsDuring } from '../../helper.js'

const PADDED = `Bearer${' '.repeat(16_000)}a b`
const INVALID = { error: 'Unauthorized', message: 'The token is invalid', code: 'token_invalid' }
const CHALLENGE = 'Bearer realm="gatehouse", error="invalid_token", error_description="The token is invalid"'

t.test('a Bearer header padded with 16,000 spaces is token_invalid on every route that reads it, with no regex run over it', async (t) => {
  const app = await build(t, { METRICS_ENABLED: true, METRICS_TOKEN: 'scrape-token-0123456789abcdef' })
  const user = await createUser(app)
  const { refresh_token: refreshToken } = await login(app, user)
  const routes = [['GET', `/api/users/${user.id}`], ['GET', '/auth/me'], ['POST', '/auth/logout'], ['GET', '/metrics']] as const
  const responses: Array<Awaited<ReturnType<typeof app.inject>>> = []
  const inputs = await regexInputsDuring(async () => {
    for (const [method, url] of routes) responses.push(await app.inject({ method, url, headers: { authorization: PADDED } }))
    // a refresh by cookie reads the header only to decide the CSRF rule: a Bearer header exempts it
    responses.push(await app.inject({ method: 'POST', url: '/auth/refresh', headers: { authorization: PADDED }, cookies: { refresh_token: refreshToken } }))
  })
  t.equal(inputs.filter((input) => input.includes(PADDED)).length, 0, 'no regex ran over the header')
  routes.forEach(([, url], i) => {
    const res = responses[i]
    t.equal(res?.statusCode, 401, url)
    t.equal(res?.headers['www-authenticate'], CHALLENGE, url)
    t.same(res?.json(), INVALID, url)
  })
  t.equal(responses[routes.length]?.statusCode, 200, 'the refresh cookie is spent without the CSRF check')
})

const MISSING = { error: 'Unauthorized', message: 'An access token is required', code: 'token_missing' }

t.test('an empty Bearer header (an unset $ACCESS_TOKEN) is token_missing with a bare Bearer challenge, never the cookie', async (t) => {
  const app = await build(t, { METRICS_ENABLED: true, METRICS_TOKEN: 'scrape-token-0123456789abcdef' })
  const user = await createUser(app)
  const { access_token: accessToken } = await login(app, user)
  // `Bearer ` as a shell sends "Bearer $ACCESS_TOKEN" with the variable unset; an HTTP parser
  // drops trailing spaces, so over a socket it arrives as `Bearer`
  for (const authorization of ['Bearer ', 'Bearer', 'bearer   ']) {
    for (const [method, url] of [['GET', '/auth/me'], ['GET', `/api/users/${user.id}`], ['GET', '/auth/verify'], ['GET', '/metrics']] as const) {
      const res = await app.inject({ method, url, headers: { authorization }, cookies: { access_token: accessToken } })
      t.equal(res.statusCode, 401, `${JSON.stringify(authorization)} ${url}`)
      t.equal(res.headers['www-authenticate'], 'Bearer realm="gatehouse"', `${JSON.stringify(authorization)} ${url}`)
      t.same(res.json(), MISSING, `${JSON.stringify(authorization)} ${url}`)
    }
  }
})
