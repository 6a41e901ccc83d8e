import formbody from '@fastify/formbody'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance, FastifyReply, onRequestHookHandler, preValidationHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { CsrfRejected, UnsupportedMediaType } from '../src/errors.js'
import { csrfMatches, isSameOriginForm, newCsrfToken } from '../src/portal/csrf.js'
import { ASSETS_DIR, hashedAssetNames, portalTemplates } from '../src/portal/files.js'
import { pageHeaders } from '../src/portal/headers.js'
import { RenderedPages } from '../src/portal/rendered-pages.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A portal form: the page its POST shows again, with the error beside the fields, when it fails. */
    portalForm?: (request: FastifyRequest) => PageView | Promise<PageView>
  }
  interface FastifyReply {
    /**
     * Renders a page inside the layout. `formTarget`: where the page's form lands after its
     * redirect, when that is another origin (form-action must allow it).
     */
    page (view: PageView, options?: PageOptions): FastifyReply
  }
}

export interface PageOptions {
  status?: number
  /** where the page's form lands after its redirect, when that is another origin (form-action must allow it) */
  formTarget?: string
  /** the same model always renders the same page, but for the CSRF token: keep the rendering (src/portal/rendered-pages.ts) */
  reuse?: boolean
}

/**
 * A page: its template (src/portal/templates), its heading, and what the template reads. A form
 * shown again after a failed POST lands on `formTarget`, else on `rd` (plugins/portal-errors.ts).
 */
export interface PageView {
  template: string
  heading: string
  [key: string]: unknown
}

export const CSRF_COOKIE = '__Host-gh_csrf'
const CSRF_SHAPE = /^[A-Za-z0-9_-]{43}$/
const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i

/**
 * What every portal page shares: Eta templates (auto-escaping: `<%=` escapes, the few raw `<%~`
 * are includes and the layout's body), compiled once by name and rendered straight to the reply
 * (through @fastify/view, its per-call options and path lookups were about half a page's cost:
 * docs/benchmarks.md#sign-in-pages), forms through @fastify/formbody (the
 * only body parser here: JSON is 415), hash-named assets through @fastify/static, §13.1's headers
 * on every answer, and the double-submit CSRF token with the Origin rule on every POST.
 * Registered inside the `/portal` scope (routes/portal/index.ts), so none of it reaches another route.
 * @see https://eta.js.org
 */
export default fp(async function portalPlugin (fastify: FastifyInstance) {
  const portal = fastify.config.portal
  if (portal === undefined) throw new Error('the portal plugin needs ENABLE_PORTAL')
  const portalOrigin = new URL(portal.publicUrl).origin
  const base = `${new URL(portal.publicUrl).pathname.replace(/\/$/, '')}/portal`
  const headers = pageHeaders(portalOrigin)
  const secure = { httpOnly: true, sameSite: 'lax', secure: true, path: '/' } as const

  fastify.removeAllContentTypeParsers()
  await fastify.register(formbody, { bodyLimit: fastify.config.bodyLimit })
  const templates = portalTemplates()
  const rendered = new RenderedPages()
  // no cache headers of its own: every portal answer is no-store (the hashed name still changes with the file)
  await fastify.register(fastifyStatic, { root: ASSETS_DIR, serve: false, cacheControl: false })
  const assets = hashedAssetNames()
  for (const [file, hashed] of assets) {
    // public files, also used by the forbidden page /auth/verify serves on an application's origin:
    // helmet's same-origin resource policy would keep them from it
    fastify.get(`/assets/${hashed}`, { schema: { hide: true } }, async (_request, reply) => await reply.header('cross-origin-resource-policy', 'cross-origin').sendFile(file))
  }
  const assetUrl = (file: string): string => `${base}/assets/${assets.get(file) ?? file}`
  const shared = { portalTitle: portal.title, base, assets: { style: assetUrl('style.css'), icon: assetUrl('icon.svg') } }

  // §13.1's headers, and 415 for a POST that is not a form, before any body is read
  const onRequest: onRequestHookHandler = function (request, reply, done) {
    reply.headers(headers.base)
    const type = request.headers['content-type']
    done(request.method === 'POST' && (type === undefined || !FORM_TYPE.test(type)) ? new UnsupportedMediaType() : undefined)
  }
  const checkCsrf: preValidationHookHandler = function (request, _reply, done) {
    const field = (request.body as Record<string, unknown> | undefined)?.csrf
    const trusted = isSameOriginForm(request.headers, portalOrigin) && csrfMatches(field, request.cookies[CSRF_COOKIE])
    done(trusted ? undefined : new CsrfRejected())
  }
  /** The browser's token, or a new one (and its cookie) when it has none: only pages with a form need one. */
  function csrfTokenOf (reply: FastifyReply): string {
    const presented = reply.request.cookies[CSRF_COOKIE]
    if (presented !== undefined && CSRF_SHAPE.test(presented)) return presented
    const token = newCsrfToken()
    reply.setCookie(CSRF_COOKIE, token, secure)
    return token
  }
  fastify.addHook('onRequest', onRequest)
  fastify.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true }
    if (route.method === 'POST' || (Array.isArray(route.method) && route.method.includes('POST'))) {
      route.preValidation = [checkCsrf, ...(route.preValidation === undefined ? [] : [route.preValidation].flat())]
    }
  })

  fastify.decorateReply('page', function (this: FastifyReply, page: PageView, options: PageOptions = {}) {
    const { template, ...model } = page
    if (options.formTarget !== undefined) this.header('content-security-policy', headers.allowingFormTarget(options.formTarget))
    const csrf = csrfTokenOf(this)
    const draw = (token: string): string => templates.render(`@${template}`, {
      ...shared, csrf: token, scripts: [], notice: undefined, error: undefined, errors: {}, form: {}, links: [], ...model
    })
    const html = options.reuse === true ? rendered.render(`${template}\n${JSON.stringify(model)}`, csrf, draw) : draw(csrf)
    return this.code(options.status ?? 200).type('text/html; charset=utf-8').send(html)
  })
}, { name: 'portal', dependencies: ['config', 'cookies'] })
