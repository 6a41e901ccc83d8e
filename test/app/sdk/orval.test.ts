import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { generate } from 'orval'
import t from 'tap'
import { assertFlow, type Flow } from './flow-expectations.js'
import { copyProgram, serve, typeCheck } from './generated.js'

/*
 * The fetch client orval generates from the served document (base URL from its `servers`),
 * compiled under strict with a client program (test/app/sdk/clients/orval.ts) and run through the
 * whole flow against the listening server.
 */
const served = await serve(t)
await generate({
  input: { target: served.documentUrl },
  output: { target: join(served.folder, 'client', 'api.ts'), client: 'fetch', mode: 'single', baseUrl: { getBaseUrlFromSpecification: true } }
})
copyProgram(served.folder, 'orval.ts', 'flow.ts')
const complaints = await typeCheck(served.folder, ['flow.ts'])

t.test('the orval client and a program using it compile under strict', async (t) => {
  t.same(complaints, [])
})

t.test('the orval client runs the whole flow: empty JSON bodies, cookies and bearer tokens', async (t) => {
  const { runFlow } = await import(pathToFileURL(join(served.folder, 'flow.ts')).href) as { runFlow: (admin: { email: string, password: string }, baseUrl: string) => Promise<Flow> }
  assertFlow(t, await runFlow(served.admin, served.baseUrl), served.admin.id)
})
