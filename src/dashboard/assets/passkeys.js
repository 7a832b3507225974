// Passkeys: the two pages that use WebAuthn. The browser's authenticator is asked through @simplewebauthn/browser
// (webauthn.js, loaded before this script as the global SimpleWebAuthnBrowser); its answer goes into a hidden field
// and the form posts as any other, so the server checks CSRF and the session exactly as for every form.

const webauthn = globalThis.SimpleWebAuthnBrowser;

function say(form, text) {
  const status = form.querySelector('[data-passkey-status]');
  if (status) status.textContent = text;
}

function failure(err, action) {
  if (err && err.name === 'NotAllowedError') return `${action} was canceled or timed out.`;
  if (err && err.name === 'InvalidStateError') return 'This authenticator holds one of your passkeys already.';
  return `${action} did not work: ${err && err.message ? err.message : 'unknown error'}.`;
}

function supported(form) {
  if (webauthn && webauthn.browserSupportsWebAuthn()) return true;
  say(form, 'This browser cannot use passkeys.');
  return false;
}

// Adding a passkey: the options (with the server's challenge) are in the form's data-options.
for (const form of document.querySelectorAll('form[data-passkey-register]')) {
  form.addEventListener('submit', async (event) => {
    if (form.elements.credential.value !== '') return;
    event.preventDefault();
    if (!form.reportValidity() || !supported(form)) return;
    say(form, 'Follow your browser’s prompt to create the passkey…');
    try {
      const answer = await webauthn.startRegistration({ optionsJSON: JSON.parse(form.dataset.options) });
      form.elements.credential.value = JSON.stringify(answer);
      form.submit();
    } catch (err) {
      say(form, failure(err, 'Adding the passkey'));
    }
  });
}

// Signing in: a challenge is asked for first (its id stays in an HttpOnly cookie), then the authenticator offers
// the passkeys it holds for this site.
for (const form of document.querySelectorAll('form[data-passkey-sign-in]')) {
  form.addEventListener('submit', async (event) => {
    if (form.elements.assertion.value !== '') return;
    event.preventDefault();
    if (!supported(form)) return;
    say(form, 'Follow your browser’s prompt to use your passkey…');
    try {
      const response = await fetch('/dashboard/sign-in/passkey/options', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new window.URLSearchParams({ csrf: form.elements.csrf.value }),
        credentials: 'same-origin',
      });
      if (!response.ok) throw new Error('the sign-in page expired; reload it');
      const answer = await webauthn.startAuthentication({ optionsJSON: await response.json() });
      form.elements.assertion.value = JSON.stringify(answer);
      form.submit();
    } catch (err) {
      say(form, failure(err, 'Signing in with a passkey'));
    }
  });
}
