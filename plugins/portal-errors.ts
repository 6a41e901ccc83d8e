import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { catalogueEntry, MethodNotAllowed, NotFound, RateLimited, type ErrorCode } from '../src/errors.js'
import { methodsAt, type ErrorAnswer } from './error-handler.js'

/**
 * Failures that are about the request, not the form's fields: a page of their own, never the form
 * again. (An unknown path never has a form; a form's own not_found, a session already ended, does.)
 */
const PAGE_LEVEL = new Set<ErrorCode>(['csrf_rejected', 'unsupported_media_type', 'payload_too_large', 'method_not_allowed', 'redirect_loop', 'bad_request', 'internal_error', 'service_unavailable', 'request_timeout'])

/** What a person reads on the page for each page-level failure (the catalogue's message is written for programs). */
const PAGES: Partial<Record<ErrorCode, { heading: string, text: string }>> = {
  csrf_rejected: { heading: 'Request refused', text: 'This form was sent from another site, or the page had expired. Go back, reload the page and try again.' },
  unsupported_media_type: { heading: 'Request refused', text: 'The portal\'s forms are sent as application/x-www-form-urlencoded.' },
  payload_too_large: { heading: 'Request refused', text: 'The form sent was too large.' },
  not_found: { heading: 'Page not found', text: 'There is no page at this address.' },
  method_not_allowed: { heading: 'Page not found', text: 'This page cannot be used that way.' },
  redirect_loop: { heading: 'Redirect loop', text: 'The application does not receive your sign-in: check COOKIE_DOMAIN.' },
  internal_error: { heading: 'Something went wrong', text: 'An unexpected error occurred. Try again in a moment.' }
}

/**
 * The portal answers in pages, errors too: a failed form is shown again with the JSON route's
 * status and code (a 422 with each message beside its field); anything else is a page saying what
 * happened, with the same status. The JSON handler's reading of the error is reused
 * (`fastify.errorAnswerOf`), so both surfaces agree on every status and code.
 */
export default fp(async function portalErrorsPlugin (fastify: FastifyInstance) {
  const home = `${fastify.config.portal?.publicUrl ?? ''}/portal/login`

  function messagePage (reply: FastifyReply, answer: ErrorAnswer, requestId?: string): FastifyReply {
    const words = PAGES[answer.code] ?? { heading: 'Request refused', text: answer.message }
    const paragraphs = requestId === undefined ? [words.text] : [words.text, `Request id: ${requestId}`]
    return reply.page({ template: 'message', heading: words.heading, error: { code: answer.code, message: words.text }, paragraphs: paragraphs.slice(1), links: [{ href: home, text: 'Sign in' }] }, { status: answer.status })
  }

  fastify.setErrorHandler(async function (error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    const answer = fastify.errorAnswerOf(error, request)
    if (answer === undefined) {
      request.log.error({ err: error }, 'request failed')
      return messagePage(reply, { status: 500, code: 'internal_error', message: catalogueEntry('internal_error').message }, request.id)
    }
    if (answer.status < 500) request.log.info({ code: answer.code }, 'request rejected')
    if (error instanceof RateLimited) reply.header('retry-after', String(error.retryAfter))
    const form = request.routeOptions.config.portalForm
    if (form === undefined || request.method !== 'POST' || PAGE_LEVEL.has(answer.code)) return messagePage(reply, answer)
    // a page may need the database to be drawn again (the account page lists the sessions)
    const view = await form(request)
    // the form shown again must still be allowed to land where it goes (CSP form-action applies to the redirect)
    const formTarget = typeof view.formTarget === 'string' ? view.formTarget : typeof view.rd === 'string' ? view.rd : undefined
    return reply.page({ ...view, error: { code: answer.code, message: answer.message }, errors: answer.errors ?? {} }, { status: answer.status, formTarget })
  })

  fastify.setNotFoundHandler(function (request: FastifyRequest, reply: FastifyReply) {
    const allowed = methodsAt(fastify, request.url)
    if (allowed.length > 0) reply.header('allow', allowed.join(', '))
    throw allowed.length > 0 ? new MethodNotAllowed(request.method) : new NotFound('The requested page was not found')
  })
}, { name: 'portal-errors', dependencies: ['portal', 'error-handler'] })
