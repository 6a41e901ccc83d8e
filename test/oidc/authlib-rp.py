"""A relying party written with Authlib (Debian's python3-authlib) against gatehouse's provider.

Run by test/oidc/authlib.test.ts as a child process with /usr/bin/python3. The settings come in
the environment (ISSUER, CLIENT_ID, CLIENT_SECRET, REDIRECT_URI, EMAIL, PASSWORD); the script
discovers the provider, sends the code flow with PKCE S256, plays the browser through the portal's
sign-in and consent pages with requests (forms read from the HTML), checks RFC 9207's `iss`,
redeems the code, validates the ID token against the JWKS, calls userinfo, refreshes, and prints
one JSON object of what it saw. Any failure raises: a non-zero exit with the traceback.
"""
import json
import os
import sys
from html.parser import HTMLParser
from urllib.parse import parse_qs, urljoin, urlparse

import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey, jwt
from authlib.oidc.core import CodeIDToken

ISSUER = os.environ['ISSUER']
CLIENT_ID = os.environ['CLIENT_ID']
REDIRECT_URI = os.environ['REDIRECT_URI']
SCOPE = 'openid profile email roles offline_access'


class Forms(HTMLParser):
    """The POST forms of a page: action, inputs, buttons (name, value, text)."""

    def __init__(self):
        super().__init__()
        self.forms = []
        self.button = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'form' and (a.get('method') or '').lower() == 'post':
            self.forms.append({'action': a.get('action'), 'fields': {}, 'buttons': []})
        elif self.forms and tag == 'input' and a.get('name') and a.get('type') != 'submit':
            self.forms[-1]['fields'][a['name']] = a.get('value') or ''
        elif self.forms and tag == 'button':
            self.button = {'name': a.get('name') or '', 'value': a.get('value') or '', 'text': ''}
            self.forms[-1]['buttons'].append(self.button)

    def handle_data(self, data):
        if self.button is not None:
            self.button['text'] += data.strip()

    def handle_endtag(self, tag):
        if tag == 'button':
            self.button = None


def loopback_secure(browser):
    """The portal's cookies are Secure (`__Host-`): browsers send them to http on loopback, a secure
    context; Python's cookie jar does not, so they are marked for http here (this host only)."""
    for cookie in browser.cookies:
        cookie.secure = False


def portal(url, browser):
    """Follows the authorization request through the portal to the redirect back; returns its URL."""
    visited = []
    answer = browser.get(url, allow_redirects=False, headers={'Sec-Fetch-Mode': 'navigate'})
    for _ in range(10):
        loopback_secure(browser)
        if answer.status_code in (302, 303):
            target = urljoin(answer.url, answer.headers['Location'])
            visited.append(urlparse(target).path)
            if target.startswith(REDIRECT_URI):
                return target, visited
            answer = browser.get(target, allow_redirects=False, headers={'Sec-Fetch-Mode': 'navigate'})
            continue
        parser = Forms()
        parser.feed(answer.text)
        forms = [f for f in parser.forms if '/portal/' in urljoin(answer.url, f['action'] or answer.url)]
        if answer.status_code != 200 or not forms:
            raise RuntimeError('%s answered %d: %s' % (answer.url, answer.status_code, answer.text[:1000]))
        form = forms[0]
        action = urljoin(answer.url, form['action'] or answer.url)
        fields = dict(form['fields'])
        if '/portal/login' in action:
            fields.update(email=os.environ['EMAIL'], password=os.environ['PASSWORD'])
        else:
            button = next(b for b in form['buttons'] if b['text'] == 'Allow')
            if button['name']:
                fields[button['name']] = button['value']
        origin = '{0.scheme}://{0.netloc}'.format(urlparse(action))
        answer = browser.post(action, data=fields, allow_redirects=False,
                              headers={'Origin': origin, 'Sec-Fetch-Site': 'same-origin', 'Sec-Fetch-Mode': 'navigate'})
    raise RuntimeError('no redirect back after 10 steps: ' + ' -> '.join(visited))


def main():
    meta = requests.get(ISSUER + '/.well-known/openid-configuration', timeout=10).json()
    client = OAuth2Session(CLIENT_ID, os.environ['CLIENT_SECRET'], scope=SCOPE, redirect_uri=REDIRECT_URI,
                           code_challenge_method='S256', token_endpoint_auth_method='client_secret_basic')
    verifier = generate_token(48)
    nonce = generate_token(20)
    url, state = client.create_authorization_url(meta['authorization_endpoint'], code_verifier=verifier, nonce=nonce)
    callback, visited = portal(url, requests.Session())
    query = parse_qs(urlparse(callback).query)
    if query.get('iss') != [meta['issuer']]:
        raise RuntimeError('RFC 9207: the response names another issuer: %r' % query.get('iss'))
    token = client.fetch_token(meta['token_endpoint'], authorization_response=callback, state=state, code_verifier=verifier)
    keys = JsonWebKey.import_key_set(requests.get(meta['jwks_uri'], timeout=10).json())
    claims = jwt.decode(token['id_token'], keys, claims_cls=CodeIDToken,
                        claims_options={'iss': {'essential': True, 'value': meta['issuer']}},
                        claims_params={'nonce': nonce, 'client_id': CLIENT_ID})
    claims.validate()
    userinfo = client.get(meta['userinfo_endpoint'], timeout=10)
    first_refresh = token['refresh_token']
    refreshed = client.refresh_token(meta['token_endpoint'])
    again = jwt.decode(refreshed['id_token'], keys, claims_cls=CodeIDToken,
                       claims_options={'iss': {'essential': True, 'value': meta['issuer']}},
                       claims_params={'client_id': CLIENT_ID})
    again.validate()
    print(json.dumps({
        'visited': visited,
        'token_type': token['token_type'],
        'scope': token['scope'],
        'id_token': {k: claims[k] for k in sorted(claims) if k not in ('iat', 'exp', 'auth_time', 'sid', 'nonce')},
        'userinfo': {'status': userinfo.status_code, 'body': userinfo.json()},
        'refresh_rotated': refreshed['refresh_token'] != first_refresh,
        'refreshed_id_token': {'sub': again['sub'], 'nonce': again.get('nonce'), 'aud': again['aud']},
    }, sort_keys=True))


if __name__ == '__main__':
    sys.exit(main())
