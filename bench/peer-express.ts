import { createSecretKey } from 'node:crypto'
import express from 'express'
import passport from 'passport'
import { ExtractJwt, Strategy as JwtStrategy } from 'passport-jwt'
import { openUsers, peerEnv } from './peer-db.js'

/**
 * The other peer: Express 5 + passport-jwt (HS256) + better-sqlite3, the same one-row read as
 * peer-fastify.ts, in its best case: no middleware but passport's, `session: false`, and no
 * ETag or X-Powered-By (Fastify sends neither, so both peers do the same work per response).
 * The secret goes in as a KeyObject: given the string, as passport-jwt documents, jsonwebtoken
 * first tries it as a PEM public key on every request, and OpenSSL 3's failed decode costs
 * ~0.9 ms, which would measure that decode rather than Express and passport.
 */
const { port, secret, dbFile, userId } = peerEnv()
const readUser = openUsers(dbFile, userId)
// typed string | Buffer, passed through to jsonwebtoken, which takes a KeyObject as is
const key = createSecretKey(Buffer.from(secret)) as unknown as Buffer
passport.use(new JwtStrategy(
  { jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(), secretOrKey: key, algorithms: ['HS256'] },
  (payload: unknown, done: (err: unknown, user?: unknown) => void) => { done(null, payload) }
))
const app = express()
app.set('etag', false)
app.disable('x-powered-by')

app.get('/users/:id', passport.authenticate('jwt', { session: false }), (req, res) => {
  const found = readUser(req.params.id)
  if (found === undefined) res.status(404).json({ error: 'not found' })
  else res.json(found)
})

const server = app.listen(port, '127.0.0.1')
process.once('SIGTERM', () => {
  server.close(() => process.exit(0))
  // keep-alive connections from the load generator would hold close() open
  server.closeAllConnections()
})
