/*
 * The return-URL attack list of docs/portal.md#return-urls, shared by the rule's unit test
 * (test/src/portal/return-url.test.ts) and the suite that follows real redirects
 * (test/routes/portal/return-urls.test.ts). The portal is `http://auth.gh.localhost` with
 * COOKIE_DOMAIN=gh.localhost and PORTAL_RETURN_HOSTS=partner.example.
 */

export const SETTINGS = { PUBLIC_URL: 'http://auth.gh.localhost', COOKIE_DOMAIN: 'gh.localhost', PORTAL_RETURN_HOSTS: 'partner.example' }

/** Each is refused: the browser lands on the default return URL. */
export const REFUSED: [string, string][] = [
  ['//evil.com', 'scheme-relative'],
  ['//evil.com/portal/account', 'scheme-relative with a path'],
  ['/\\evil.com', 'slash-backslash (the parser reads \\ as /)'],
  ['\\\\evil.com', 'two backslashes'],
  ['/\\/evil.com', 'slash-backslash-slash'],
  ['https:evil.com', 'no slashes: WHATWG reads it as https://evil.com/'],
  ['https:/evil.com', 'one slash: WHATWG reads it as https://evil.com/'],
  ['javascript:alert(1)', 'javascript:'],
  ['JavaScript:alert(1)//auth.gh.localhost', 'javascript: in another case'],
  ['data:text/html,<script>alert(1)</script>', 'data:'],
  ['data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==', 'data: in base64'],
  ['vbscript:msgbox(1)', 'another scheme'],
  ['ftp://auth.gh.localhost/', 'a scheme other than http(s), own host'],
  ['http://evil.com/', 'plain http to a non-local host'],
  ['http://partner.example/', 'plain http to a listed, non-local host'],
  ['https://user:pass@auth.gh.localhost/portal/account', 'user and password'],
  ['https://user@auth.gh.localhost/', 'a user alone'],
  ['https://auth.gh.localhost@evil.com/', 'our host as the user part'],
  ['https://evil.com', 'a foreign host'],
  ['https://evil.com/https://auth.gh.localhost/', 'our URL in a foreign path'],
  ['https://auth.gh.localhost.evil.com/', 'our host as a prefix'],
  ['https://evilgh.localhost/', 'the cookie domain as a suffix without a dot'],
  ['https://gh.localhost.evil.com/', 'the cookie domain as a prefix'],
  ['https://auth.gh.localhost%2f.evil.com/', 'an encoded slash in the host'],
  ['https://sub.partner.example/', 'a subdomain of a PORTAL_RETURN_HOSTS entry (exact match only)'],
  ['https://partner.example.evil.com/', 'a PORTAL_RETURN_HOSTS entry as a prefix'],
  ['https://xn--uth-5cd.gh.localhost.evil.com/', 'punycode before a foreign domain'],
  ['https://аuth.gh.lоcalhost/', 'IDN lookalike (Cyrillic а and о) of our host'],
  ['https://xn--gh-localhost-xyz/', 'punycode that is not ours'],
  ['/portal/acc\tount', 'a tab (the parser would strip it)'],
  ['/\t/evil.com', 'a tab making //evil.com'],
  ['/\n/evil.com', 'a newline making //evil.com'],
  ['/\r\nSet-Cookie:x=1', 'raw CR LF (header injection)'],
  ['/portal/account next', 'a space'],
  [' https://auth.gh.localhost/', 'a leading space'],
  ['/portal/account\u007f', 'DEL'],
  ['/portal/account\u0000', 'NUL'],
  ['/portal\u0001/account', 'a C0 control'],
  [`/portal/account?x=${'a'.repeat(2049 - '/portal/account?x='.length)}`, '2049 characters']
]

/** Each is taken, and the browser goes exactly to `[1]` (WHATWG's serialisation). */
export const ALLOWED: [string, string, string][] = [
  ['/portal/account?tab=2#top', 'http://auth.gh.localhost/portal/account?tab=2#top', 'a path on this service'],
  ['/%0d%0aSet-Cookie:x=1', 'http://auth.gh.localhost/%0d%0aSet-Cookie:x=1', 'percent-encoded CR LF stays encoded in the path: no header is injected'],
  ['http://auth.gh.localhost/x', 'http://auth.gh.localhost/x', 'our own origin (http on a *.localhost name, outside production)'],
  ['https://auth.gh.localhost./x', 'https://auth.gh.localhost./x', 'a trailing dot'],
  ['https://auth.gh.localhost:8443/x', 'https://auth.gh.localhost:8443/x', 'another port'],
  ['http://auth.gh.localhost:8080/x', 'http://auth.gh.localhost:8080/x', 'another port, http'],
  ['https://AUTH.GH.LOCALHOST/x', 'https://auth.gh.localhost/x', 'upper case, normalised'],
  ['https://ａuth.gh.localhost/x', 'https://auth.gh.localhost/x', 'a fullwidth letter IDNA maps to our own host'],
  ['https:auth.gh.localhost/x', 'https://auth.gh.localhost/x', 'no slashes: WHATWG reads our own host'],
  ['https://app.gh.localhost/dashboard', 'https://app.gh.localhost/dashboard', 'a subdomain of COOKIE_DOMAIN'],
  ['https://a.b.gh.localhost/', 'https://a.b.gh.localhost/', 'a deeper subdomain of COOKIE_DOMAIN'],
  ['https://gh.localhost/', 'https://gh.localhost/', 'COOKIE_DOMAIN itself'],
  ['https://partner.example/back', 'https://partner.example/back', 'a PORTAL_RETURN_HOSTS entry, exactly'],
  ['https://partner.example:444/back', 'https://partner.example:444/back', 'a PORTAL_RETURN_HOSTS entry on another port'],
  [`/portal/account?x=${'a'.repeat(2048 - '/portal/account?x='.length)}`, `http://auth.gh.localhost/portal/account?x=${'a'.repeat(2048 - '/portal/account?x='.length)}`, '2048 characters, the limit']
]
