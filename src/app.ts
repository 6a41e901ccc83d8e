import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import auditPlugin from '../plugins/audit.js'
import configPlugin from '../plugins/config.js'
import countersPlugin from '../plugins/counters.js'
import cookiesPlugin from '../plugins/cookies.js'
import dbPlugin from '../plugins/db.js'
import denialsPlugin from '../plugins/denials.js'
import errorHandlerPlugin, { clientErrorHandler } from '../plugins/error-handler.js'
import guardPlugin from '../plugins/guard.js'
import jsonBodyPlugin from '../plugins/json-body.js'
import lifecyclePlugin from '../plugins/lifecycle.js'
import metricsPlugin from '../plugins/metrics.js'
import noStorePlugin from '../plugins/no-store.js'
import rateLimitPlugin from '../plugins/rate-limit.js'
import securityPlugin from '../plugins/security.js'
import serializersPlugin from '../plugins/serializers.js'
import openapiPlugin from '../plugins/openapi.js'
import oauth2CorsPlugin from '../plugins/oauth2-cors.js'
import oauth2FormsPlugin from '../plugins/oauth2-forms.js'
import portalErrorsPlugin from '../plugins/portal-errors.js'
import portalSessionPlugin from '../plugins/portal-session.js'
import portalPlugin from '../plugins/portal.js'
import servicesPlugin from '../plugins/services.js'
import validationPlugin from '../plugins/validation.js'
import apiRoutes from '../routes/api/index.js'
import authRoutes from '../routes/auth/index.js'
import discoveryRoutes from '../routes/discovery.js'
import docsRoutes from '../routes/docs.js'
import healthRoutes from '../routes/health.js'
import jwksRoutes from '../routes/jwks.js'
import metricsRoutes from '../routes/metrics.js'
import portalRoutes from '../routes/portal/index.js'
import { oauth2Routes } from '../routes/oauth2/index.js'
import idpRoutes from '../routes/auth/idp.js'
import type { IdpServices } from './idp/index.js'
import type { OidcServices } from './oidc/provider.js'
import type { Config } from './config/config.js'
import { lazyChildLoggerFactory } from './logging/lazy-logger.js'
import { loggerOptions, type LogStream } from './logging/logger.js'
import { requestIdGenerator } from './logging/request-ids.js'
import type { TransportOptions } from './mail/transport.js'

export interface BuildOptions {
  logger?: boolean
  logStream?: LogStream
  /** wall clock, ms (tests set one that is off, as a real host's may be) */
  clock?: () => number
  mailTransport?: TransportOptions
  /** ms between discovery attempts of an identity provider whose discovery failed (a minute; tests shorten it) */
  idpRetryInterval?: number
}

export async function buildApp (config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const { trustProxy } = config
  const app = Fastify({
    logger: options.logger ?? loggerOptions(config, options.logStream),
    // per-request lines are opt-in (LOG_REQUESTS): audit and error lines are always written
    logController: new LogController({ disableRequestLogging: !config.logRequests }),
    childLoggerFactory: lazyChildLoggerFactory as unknown as FastifyServerOptions['childLoggerFactory'],
    bodyLimit: config.bodyLimit,
    genReqId: requestIdGenerator(),
    requestIdHeader: false,
    // the router's own refusals happen before any route is found: without this they bypass the error handler
    frameworkErrors: (error, request, reply) => { request.server.errorHandler(error, request, reply) },
    clientErrorHandler,
    trustProxy: typeof trustProxy === 'number' ? (_address: string, hop: number) => hop < trustProxy : trustProxy,
    // slow clients cannot hold a connection: the whole request is bounded (headers by Node's 16 KiB)
    requestTimeout: config.requestTimeout * 1000,
    connectionTimeout: config.requestTimeout * 1000
  })
  app.server.headersTimeout = 10_000
  // headers past the hundredth are dropped by Node, never parsed
  app.server.maxHeadersCount = 100

  try {
    await registerAll(app, config, options)
  } catch (err) {
    // a plugin refused to start: what the plugins before it opened is closed, so nothing is left open
    await app.close().catch(() => {})
    throw err
  }
  return app
}

async function registerAll (app: FastifyInstance, config: Config, options: BuildOptions): Promise<void> {
  await app.register(configPlugin, { config })
  await app.register(validationPlugin)
  await app.register(serializersPlugin)
  await app.register(errorHandlerPlugin)
  await app.register(securityPlugin)
  await app.register(countersPlugin)
  await app.register(jsonBodyPlugin)
  await app.register(noStorePlugin)
  if (config.corsOrigins.length > 0) {
    const { default: corsPlugin } = await import('../plugins/cors.js')
    await app.register(corsPlugin)
  }
  await app.register(dbPlugin)
  await app.register(cookiesPlugin)
  await app.register(servicesPlugin, { mailTransport: options.mailTransport, clock: options.clock, idpRetryInterval: options.idpRetryInterval })
  await app.register(metricsPlugin)
  await app.register(auditPlugin)
  await app.register(lifecyclePlugin)
  await app.register(rateLimitPlugin)
  await app.register(guardPlugin)
  await app.register(denialsPlugin)
  // before the routes: its onRoute hook collects them into the OpenAPI document
  await app.register(openapiPlugin)

  await app.register(healthRoutes)
  await app.register(jwksRoutes)
  // not registered at all when off: GET /metrics is then an unknown route (404)
  if (config.metrics !== undefined) await app.register(metricsRoutes)
  // not registered at all when off: both discovery documents are then unknown routes (404)
  if (config.oidc !== undefined) await app.register(discoveryRoutes, { issuer: config.oidc.issuer })
  await app.register(authRoutes, { prefix: '/auth' })
  await app.register(apiRoutes, { prefix: '/api' })
  // not registered at all when off: every /portal path is then an unknown route (404)
  if (config.portal !== undefined) await app.register(portalScope, { prefix: '/portal' })
  // ENABLE_OIDC_PROVIDER: not registered at all when off (404)
  const oidc = app.services.oidc
  if (oidc !== undefined) await app.register(oauth2Scope(oidc), { prefix: '/oauth2' })
  // ENABLE_IDP_LOGIN: not registered at all when off (404)
  const idp = app.services.idp
  if (idp !== undefined) await app.register(idpScope(idp), { prefix: '/auth/idp' })
  await app.register(docsRoutes)
}

/** /oauth2: the browser's routes inside the portal's plugins, the token endpoints inside their form and error plugin. */
function oauth2Scope (oidc: OidcServices): (scope: FastifyInstance) => Promise<void> {
  const routes = oauth2Routes(oidc)
  return async function (scope) {
    await scope.register(oauth2CorsPlugin)
    await scope.register(async (browser) => {
      await browser.register(portalPlugin)
      await browser.register(portalSessionPlugin)
      await browser.register(portalErrorsPlugin)
      await browser.register(routes.browser)
    })
    await scope.register(async (forms) => {
      await forms.register(oauth2FormsPlugin)
      await forms.register(routes.forms)
    })
    await scope.register(routes.userinfo)
  }
}

/** /auth/idp: sign-in through a provider, inside the portal's plugins (its session, its pages and headers). */
function idpScope (idp: IdpServices): (scope: FastifyInstance) => Promise<void> {
  return async function (scope) {
    await scope.register(portalPlugin)
    await scope.register(portalSessionPlugin)
    await scope.register(portalErrorsPlugin)
    await scope.register(idpRoutes(idp))
  }
}

/** The portal's plugins and routes in one scope of their own: its parser, headers and error pages stay inside. */
async function portalScope (scope: FastifyInstance): Promise<void> {
  await scope.register(portalPlugin)
  await scope.register(portalSessionPlugin)
  await scope.register(portalErrorsPlugin)
  await scope.register(portalRoutes)
}
