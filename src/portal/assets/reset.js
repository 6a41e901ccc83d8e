// The reset link carries its token after `#`, which the browser never sends: put it in the form,
// then take it out of the address bar (and so out of the history and of anything that reads the URL).
{
  const token = new URLSearchParams(window.location.hash.slice(1)).get('token')
  if (token !== null) {
    const field = document.querySelector('input[name="token"]')
    if (field !== null) field.value = token
    window.history.replaceState(null, '', window.location.pathname + window.location.search)
  }
}
