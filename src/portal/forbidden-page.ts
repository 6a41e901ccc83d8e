import { hashedAssetNames, portalTemplates } from './files.js'

/** Who was refused, and why: what /auth/verify's 403 body says, as a person reads it. */
export interface Refusal {
  /** the signed-in user's email */
  email: string | undefined
  /** the roles that would have passed; undefined when AUTHZ_DENIAL_DETAILS=false keeps them out */
  requiredRoles: readonly string[] | undefined
  /** the application's URL the browser asked for, when it passed the return-URL rule ("Sign in as someone else" comes back to it) */
  target: string | undefined
}

/** What a person reads for each reason a signed-in user is refused (docs/api.md's 403 reasons): /portal/forbidden and this page alike. */
const EXPLANATIONS: Readonly<Record<string, string>> = {
  missing_role: 'Your account does not have a role this page needs.',
  not_owner: 'This page belongs to another account.',
  superuser_required: 'Only a superuser may open this page.'
}

export function refusalText (reason: string | undefined): string {
  return (reason === undefined ? undefined : EXPLANATIONS[reason]) ?? 'You do not have access to this page.'
}

/**
 * The forbidden page /auth/verify answers a browser navigation with (docs/proxies.md): the
 * template of /portal/forbidden inside the portal's layout, the same content, but served on the
 * application's origin (the proxy passes gatehouse's answer on), so every URL in it is absolute,
 * to PUBLIC_URL, and its policy allows the style sheet from there and nothing else. Rendered only for a refusal: never on the way of
 * a request that passes.
 */
export function forbiddenPage (portal: { publicUrl: string, title: string, defaultReturnUrl: string }): (refusal: Refusal) => { headers: Record<string, string>, html: string } {
  const eta = portalTemplates()
  const origin = new URL(portal.publicUrl).origin
  const base = `${portal.publicUrl}/portal`
  const style = `${base}/assets/${hashedAssetNames().get('style.css') ?? 'style.css'}`
  const headers = {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': `default-src 'none'; style-src ${origin}; frame-ancestors 'none'; form-action 'none'`,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store'
  }
  return ({ email, requiredRoles, target }) => {
    const html = eta.render('@forbidden', {
      portalTitle: portal.title,
      base,
      assets: { style },
      scripts: [],
      heading: 'Access denied',
      wide: false,
      notice: undefined,
      error: { code: 'forbidden', message: refusalText('missing_role') },
      email,
      reason: 'missing_role',
      requiredRoles: requiredRoles ?? [],
      switchHref: `${base}/login?prompt=login&rd=${encodeURIComponent(target ?? portal.defaultReturnUrl)}`
    })
    return { headers, html }
  }
}
