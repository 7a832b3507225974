import { html, type SafeHtml } from '../src/web/html.js';
import { OAUTH_MOUNT } from '../src/core/oauth-clients/oauth-clients.service.js';

/**
 * The consent page (spec 5.5): who asks, for what, and the user's own API key to approve with. Rendered with the
 * escaping template every page shares (src/web/html.ts); styled by a stylesheet of its own so its policy needs no
 * unsafe-inline (src/web/page-policy.ts).
 */

/** Where the consent page's stylesheet is served (oauth/router.ts). */
export const CONSENT_STYLESHEET_PATH = `${OAUTH_MOUNT}/assets/consent.css`;

export const CONSENT_STYLESHEET = `body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f4f5f7; color: #1b1d21; }
main { max-width: 28rem; margin: 3rem auto; background: #fff; padding: 2rem; border-radius: 12px; box-shadow: 0 1px 4px rgba(0,0,0,.12); }
h1 { font-size: 1.3rem; margin-top: 0; }
label { display: block; font-weight: 600; margin: 1rem 0 .25rem; }
input[type=password] { width: 100%; box-sizing: border-box; padding: .6rem; font: inherit; border: 1px solid #767b85; border-radius: 6px; }
.actions { display: flex; gap: .75rem; margin-top: 1.5rem; }
button { font: inherit; padding: .6rem 1.2rem; border-radius: 6px; border: 1px solid #1b1d21; cursor: pointer; }
button.primary { background: #1746a2; color: #fff; border-color: #1746a2; }
button:focus-visible, input:focus-visible { outline: 3px solid #f5a623; outline-offset: 2px; }
.error { background: #fdecea; color: #8a1c12; padding: .6rem .8rem; border-radius: 6px; }
.warning { background: #fff4e5; color: #5c3400; padding: .6rem .8rem; border-radius: 6px; }
.note { color: #4a4f59; font-size: .95rem; }
dl { display: grid; grid-template-columns: auto 1fr; gap: .25rem 1rem; } dt { color: #4a4f59; } dd { margin: 0; }
`;

export interface ConsentView {
  uid: string;
  clientName: string;
  redirectHost: string;
  scope: string;
  csrf: string;
  error: string | null;
  /**
   * Set for a client known only by its metadata document: the host its client_id names (the one thing about it
   * that is not the client's own say) and whether the code goes back to this computer (a loopback redirect).
   */
  document?: { clientHost: string; loopbackRedirect: boolean } | undefined;
}

/**
 * What a metadata-document client is, in words that do not take its word for it. Its name is whatever its
 * document says, so the host that serves the document is shown beside it as plain text. Its `logo_uri` is
 * never shown (the document's fields are not even kept): the client picks the picture, so it could wear another
 * brand's logo, and loading it from the client's server would tell that server who opened the page and when.
 */
function documentClientLines(document: NonNullable<ConsentView['document']>): SafeHtml {
  return html`<p class="note">The name above is how the app describes itself. It is published by <strong>${document.clientHost}</strong>; approve only if that is who you meant to connect.</p>
  ${document.loopbackRedirect ? html`<p class="warning" role="note">The app runs on your computer: the approval goes back to a program on this computer, not to a website. Approve only if you just started it yourself.</p>` : ''}`;
}

export function renderConsentPage(view: ConsentView): SafeHtml {
  const action = (path: string) => `${OAUTH_MOUNT}/interaction/${encodeURIComponent(view.uid)}/${path}`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorize ${view.clientName}</title>
<link rel="stylesheet" href="${CONSENT_STYLESHEET_PATH}">
</head>
<body>
<main>
  <h1><strong>${view.clientName}</strong> wants to publish for your workspace</h1>
  ${view.document === undefined ? '' : documentClientLines(view.document)}
  <dl>
    ${view.document === undefined ? '' : html`<dt>App from</dt><dd>${view.document.clientHost}</dd>`}
    <dt>Access</dt><dd>${view.scope} — publish content, read its status, manage webhooks</dd>
    <dt>Returns to</dt><dd>${view.redirectHost}</dd>
  </dl>
  ${view.error === null ? '' : html`<p class="error" role="alert">${view.error}</p>`}
  <form method="post" action="${action('confirm')}">
    <input type="hidden" name="csrf" value="${view.csrf}">
    <label for="api_key">Your API key</label>
    <input id="api_key" name="api_key" type="password" autocomplete="off" required placeholder="svc_live_…" autofocus>
    <div class="actions">
      <button class="primary" type="submit">Approve</button>
      <button type="submit" formaction="${action('abort')}" formnovalidate>Deny</button>
    </div>
  </form>
</main>
</body>
</html>`;
}
