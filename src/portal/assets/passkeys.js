// Passkeys in the portal's pages (docs/passkeys.md#in-the-portal). Every form marked `data-passkey`
// is hidden in the HTML and shown here, so a browser without JavaScript or WebAuthn never sees a
// button that cannot work. The ceremony's answer goes into the form's hidden `credential` field and
// the form is posted as any other: the server verifies it, and answers 303 or the page with its error.
{
  const bytes = (text) => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0))
  const text = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
  const descriptors = (list) => (list ?? []).map((d) => ({ ...d, id: bytes(d.id) }))

  /** PublicKeyCredential{Request,Creation}OptionsJSON → the options navigator.credentials takes. */
  const requestOptions = (o) => ({ ...o, challenge: bytes(o.challenge), allowCredentials: descriptors(o.allowCredentials) })
  const creationOptions = (o) => ({ ...o, challenge: bytes(o.challenge), user: { ...o.user, id: bytes(o.user.id) }, excludeCredentials: descriptors(o.excludeCredentials) })

  /** The credential as its JSON form (WebAuthn L3's toJSON shape), which the server reads. */
  function credentialJSON (credential) {
    const r = credential.response
    const response = r.attestationObject === undefined
      ? { clientDataJSON: text(r.clientDataJSON), authenticatorData: text(r.authenticatorData), signature: text(r.signature), userHandle: r.userHandle === null ? undefined : text(r.userHandle) }
      : { clientDataJSON: text(r.clientDataJSON), attestationObject: text(r.attestationObject), transports: typeof r.getTransports === 'function' ? r.getTransports() : [] }
    return JSON.stringify({
      id: credential.id,
      rawId: text(credential.rawId),
      type: credential.type,
      response,
      clientExtensionResults: credential.getClientExtensionResults(),
      authenticatorAttachment: credential.authenticatorAttachment ?? undefined
    })
  }

  /** `{challenge_id, options}` from a JSON route, or an Error carrying the route's code and message. */
  async function fetchOptions (url, body) {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), credentials: 'same-origin' })
    const answer = await response.json().catch(() => ({}))
    if (response.ok) return answer
    throw Object.assign(new Error(answer.message ?? `HTTP ${response.status}`), { code: answer.code ?? 'internal_error' })
  }

  /** The error beside the form, as the server's pages show theirs (role=alert, data-code). */
  function showError (form, code, message) {
    let alert = form.previousElementSibling
    if (alert === null || !alert.classList.contains('alert')) {
      alert = Object.assign(document.createElement('p'), { className: 'alert' })
      alert.setAttribute('role', 'alert')
      form.before(alert)
    }
    alert.dataset.code = code
    alert.textContent = message
  }

  function post (form, challengeId, credential) {
    const csrf = form.elements.namedItem('csrf')
    // the sign-in page's passkey form carries no token of its own (the page is kept rendered with one place for it)
    if (csrf.value === '') csrf.value = document.querySelector('input[name="csrf"]').value
    form.elements.namedItem('challenge_id').value = challengeId
    form.elements.namedItem('credential').value = credential
    form.submit()
  }

  const cancelled = (err) => err.name === 'NotAllowedError' || err.name === 'AbortError'

  /**
   * The sign-in page: a conditional request on load (the browser offers the passkeys in the email
   * field's autofill), aborted, and its end awaited, before the button's modal one; after a cancelled
   * modal request the conditional one starts again.
   */
  function signIn (form) {
    const button = form.querySelector('button')
    let pending
    let conditional
    const fail = (err) => { if (!cancelled(err)) showError(form, err.code ?? 'passkey_invalid', err.message) }
    const fresh = async () => {
      // a challenge lives five minutes: one fetched over four ago is replaced
      if (pending === undefined || Date.now() - pending.at > 240_000) pending = { at: Date.now(), answer: await fetchOptions(form.dataset.optionsUrl, {}) }
      return pending.answer
    }
    async function ceremony (mediation, signal) {
      const { challenge_id: challengeId, options } = await fresh()
      signal?.throwIfAborted()
      const credential = await navigator.credentials.get({ publicKey: requestOptions(options), mediation, signal })
      pending = undefined
      post(form, challengeId, credentialJSON(credential))
    }
    async function autofill () {
      if (!(await window.PublicKeyCredential.isConditionalMediationAvailable?.())) return
      const controller = new AbortController()
      conditional = { controller, done: ceremony('conditional', controller.signal).catch(fail) }
    }
    button.addEventListener('click', async () => {
      button.disabled = true
      const running = conditional
      conditional = undefined
      if (running !== undefined) {
        running.controller.abort()
        await running.done
      }
      await ceremony('optional').catch((err) => {
        button.disabled = false
        fail(err)
        if (cancelled(err)) autofill()
      })
    })
    // after a refused passkey the page does not offer it again by itself; the button still does
    if (document.querySelector('[data-code="passkey_invalid"]') === null) autofill()
  }

  /** The second step: the options came with the page (they name this user's passkeys). */
  function secondFactor (form) {
    const button = form.querySelector('button')
    button.addEventListener('click', () => {
      button.disabled = true
      navigator.credentials.get({ publicKey: requestOptions(JSON.parse(form.dataset.options)) })
        .then((credential) => { post(form, form.elements.namedItem('challenge_id').value, credentialJSON(credential)) })
        .catch((err) => { button.disabled = false; if (!cancelled(err)) showError(form, 'passkey_invalid', err.message) })
    })
  }

  /** The account page's "Add a passkey": options from the JSON route (the password when the sign-in is not recent). */
  function register (form) {
    form.addEventListener('submit', (event) => {
      event.preventDefault()
      const password = form.elements.namedItem('password')
      const button = form.querySelector('button')
      button.disabled = true
      fetchOptions(form.dataset.optionsUrl, password === null || password.value === '' ? {} : { password: password.value })
        .then(async ({ challenge_id: challengeId, options }) => {
          const credential = await navigator.credentials.create({ publicKey: creationOptions(options) })
          // the password proved a recent sign-in to the options route; the form does not send it again
          if (password !== null) password.disabled = true
          post(form, challengeId, credentialJSON(credential))
        })
        .catch((err) => {
          button.disabled = false
          if (err.name === 'InvalidStateError') showError(form, 'passkey_exists', 'This authenticator already holds a passkey for your account.')
          else if (!cancelled(err)) showError(form, err.code ?? 'passkey_invalid', err.message)
        })
    })
  }

  if (window.PublicKeyCredential !== undefined) {
    const kinds = { login: signIn, 'second-factor': secondFactor, register }
    for (const form of document.querySelectorAll('form[data-passkey]')) {
      form.hidden = false
      kinds[form.dataset.passkey]?.(form)
    }
  }
}
