import { randomBytes, randomUUID } from 'node:crypto'
import { SignJWT } from 'jose'
import { startPeer, type Child } from './servers.js'

/** The two comparison peers, started once per run, and the one token both accept. */
export interface Peers { fastify: Child, express: Child, userId: string, token: string }

// far past any run (the watchdog stops a run long before), so one token serves every round
const TOKEN_LIFETIME = '7d'

export async function startPeers (dir: string): Promise<Peers> {
  const secret = randomBytes(48).toString('base64')
  const userId = randomUUID()
  const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(userId).setIssuedAt().setExpirationTime(TOKEN_LIFETIME)
    .sign(new TextEncoder().encode(secret))
  const env = { JWT_SECRET: secret, USER_ID: userId }
  // one after the other: each start-up has the machine to itself, as bare's does
  const fastify = await startPeer(dir, 'peer-fastify', env, token)
  const express = await startPeer(dir, 'peer-express', env, token)
  return { fastify, express, userId, token }
}
