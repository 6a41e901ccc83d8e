import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { createClient } from '@hey-api/openapi-ts'
import t from 'tap'
import { copyProgram, serve, typeCheck } from './generated.js'
import { assertFlow, type Flow } from './flow-expectations.js'

/*
 * The SDK @hey-api/openapi-ts (with its fetch client) generates from the served document,
 * compiled under strict with a client program (test/app/sdk/clients/hey-api.ts) and run through the
 * whole flow against the listening server.
 */
const served = await serve(t)
await createClient({ input: served.documentUrl, output: join(served.folder, 'client'), plugins: ['@hey-api/client-fetch'], logs: { level: 'silent' } })
copyProgram(served.folder, 'hey-api.ts', 'flow.ts')
const complaints = await typeCheck(served.folder, ['flow.ts'])

t.test('the @hey-api/openapi-ts SDK and a program using it compile under strict', async (t) => {
  t.same(complaints, [])
})

t.test('the @hey-api/openapi-ts SDK runs the whole flow, credentials attached from the declared security', async (t) => {
  const { runFlow } = await import(pathToFileURL(join(served.folder, 'flow.ts')).href) as { runFlow: (admin: { email: string, password: string }) => Promise<Flow> }
  assertFlow(t, await runFlow(served.admin), served.admin.id)
})
