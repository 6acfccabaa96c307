// The sign-in page's script, served at `/assets/camd-signin.js` (the page's CSP allows no
// inline script). It sends the token to `POST /v1/session` as JSON, which sets camd's
// session cookie, and reloads the page the browser asked for, now signed in.
'use strict';
(function () {
  const form = document.getElementById('camd-signin');
  const field = document.getElementById('camd-token');
  const status = document.getElementById('camd-signin-status');
  const button = form.querySelector('button');

  function show(message, isError) {
    status.textContent = message;
    status.classList.toggle('error', isError);
    field.setAttribute('aria-invalid', isError ? 'true' : 'false');
  }

  form.addEventListener('submit', async function (event) {
    event.preventDefault();
    const token = field.value.trim();
    if (!token) {
      show('Enter the token.', true);
      field.focus();
      return;
    }
    button.disabled = true;
    show('Signing in…', false);
    try {
      const response = await fetch('/v1/session', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ token: token }),
        credentials: 'same-origin',
      });
      if (response.ok) {
        show('Signed in.', false);
        location.reload();
        return;
      }
      let message = 'Sign-in failed (' + response.status + ').';
      try {
        const body = await response.json();
        if (body && body.error && body.error.message) message = body.error.message;
      } catch (_) { /* not JSON: keep the status */ }
      show(response.status === 401 ? 'That token is not right: ' + message : message, true);
      field.select();
    } catch (error) {
      show('camd could not be reached: ' + error.message, true);
    } finally {
      button.disabled = false;
    }
  });
})();
