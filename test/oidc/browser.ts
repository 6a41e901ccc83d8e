import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'

/*
 * A browser over real HTTP for the relying-party suites: a cookie jar per host, the headers a
 * browser sends for a navigation and for a same-origin form, and the forms of a page read out of
 * its HTML (whatever their fields are named). It connects to 127.0.0.1 whatever the URL's host
 * (`*.localhost` included, which Chromium resolves to loopback and getaddrinfo does not), and
 * never follows a redirect: the flow helpers assert each one.
 */

export interface Answer { status: number, headers: IncomingHttpHeaders, body: string, location?: string }

export interface Form { action: string, fields: Record<string, string>, buttons: Array<{ name: string, value: string, text: string }> }

const unescape = (text: string): string =>
  text.replaceAll('&quot;', '"').replaceAll('&#39;', '\'').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&')

const attribute = (tag: string, name: string): string | undefined => {
  const value = new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1]
  return value === undefined ? undefined : unescape(value)
}

/** The POST forms of a page, their action resolved against `url`, with their inputs and buttons. */
export function formsOf (html: string, url: string): Form[] {
  return [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)]
    .filter((m) => (attribute(m[1] ?? '', 'method') ?? 'get').toLowerCase() === 'post')
    .map((m) => {
      const inner = m[2] ?? ''
      const fields: Record<string, string> = {}
      for (const input of inner.matchAll(/<input\b[^>]*>/g)) {
        const name = attribute(input[0], 'name')
        if (name !== undefined && attribute(input[0], 'type') !== 'submit') fields[name] = attribute(input[0], 'value') ?? ''
      }
      const buttons = [...inner.matchAll(/<button\b([^>]*)>([\s\S]*?)<\/button>/g)].map((b) => ({
        name: attribute(b[1] ?? '', 'name') ?? '',
        value: attribute(b[1] ?? '', 'value') ?? '',
        text: unescape((b[2] ?? '').replace(/<[^>]*>/g, '').trim())
      }))
      return { action: new URL(attribute(m[1] ?? '', 'action') ?? url, url).href, fields, buttons }
    })
}

export class HttpBrowser {
  /** host → cookie name → value */
  readonly jars = new Map<string, Map<string, string>>()

  private jar (host: string): Map<string, string> {
    let jar = this.jars.get(host)
    if (jar === undefined) this.jars.set(host, jar = new Map())
    return jar
  }

  cookie (url: string, name: string): string | undefined {
    return this.jar(new URL(url).hostname).get(name)
  }

  private remember (host: string, headers: IncomingHttpHeaders): void {
    for (const line of headers['set-cookie'] ?? []) {
      const [pair = '', ...attributes] = line.split(';')
      const at = pair.indexOf('=')
      const name = pair.slice(0, at).trim()
      const value = pair.slice(at + 1).trim()
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a))
      if (expired || value === '') this.jar(host).delete(name)
      else this.jar(host).set(name, value)
    }
  }

  async send (method: string, url: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
    const target = new URL(url)
    const jar = this.jar(target.hostname)
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ')
    const sent = { host: target.host, ...(cookie === '' ? {} : { cookie }), ...headers }
    const answer = await new Promise<Answer>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: target.port, method, path: target.pathname + target.search, headers: sent, agent: false }, (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => { text += chunk })
        res.on('end', () => {
          const location = res.headers.location === undefined ? undefined : new URL(res.headers.location, url).href
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, location })
        })
      })
      req.on('error', reject)
      req.end(body)
    })
    this.remember(target.hostname, answer.headers)
    return answer
  }

  /** A top-level navigation to `url`. */
  async get (url: string): Promise<Answer> {
    return await this.send('GET', url, { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', accept: 'text/html' })
  }

  /** Submits `form` as a browser does from a page of the form's own origin, with `fields` filled in. */
  async submit (form: Form, fields: Record<string, string> = {}, button?: { name: string, value: string }): Promise<Answer> {
    const values = { ...form.fields, ...fields, ...(button === undefined || button.name === '' ? {} : { [button.name]: button.value }) }
    return await this.send('POST', form.action, {
      'content-type': 'application/x-www-form-urlencoded',
      origin: new URL(form.action).origin,
      'sec-fetch-site': 'same-origin',
      'sec-fetch-mode': 'navigate',
      'sec-fetch-dest': 'document'
    }, new URLSearchParams(values).toString())
  }
}
