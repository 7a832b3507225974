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
input[type=password], select { width: 100%; box-sizing: border-box; padding: .6rem; font: inherit; border: 1px solid #767b85; border-radius: 6px; }
.actions { display: flex; gap: .75rem; margin-top: 1.5rem; }
button { font: inherit; padding: .6rem 1.2rem; border-radius: 6px; border: 1px solid #1b1d21; cursor: pointer; }
button.primary { background: #1746a2; color: #fff; border-color: #1746a2; }
button:focus-visible, input:focus-visible, select:focus-visible, a:focus-visible { outline: 3px solid #f5a623; outline-offset: 2px; }
.error { background: #fdecea; color: #8a1c12; padding: .6rem .8rem; border-radius: 6px; }
.warning { background: #fff4e5; color: #5c3400; padding: .6rem .8rem; border-radius: 6px; }
.note { color: #4a4f59; font-size: .95rem; }
section { border-top: 1px solid #d5d8de; margin-top: 1.5rem; padding-top: 1rem; }
h2 { font-size: 1.05rem; margin: 0 0 .5rem; }
fieldset { border: 0; margin: 1rem 0 0; padding: 0; } legend { font-weight: 600; padding: 0; }
label.check { display: flex; gap: .5rem; align-items: center; font-weight: normal; margin: .25rem 0; }
a { color: #1746a2; }
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
  /** A person signed in (through /dashboard/authorize/{uid}): who they are and what they may grant. */
  person?: PersonView | undefined;
  /** Where a person signs in to approve with their account (absent: the page offers only the API key). */
  signInHref?: string | undefined;
  /** The roles the API-key form offers; the key's own is the default and the ceiling (checked on approval). */
  keyRoles?: readonly RoleOption[] | undefined;
}

export interface RoleOption {
  value: string;
  label: string;
  selected: boolean;
}

export interface PersonView {
  email: string;
  /** Every workspace they belong to; the choice is shown when there are several. */
  workspaces: readonly { id: string; name: string; selected: boolean }[];
  workspaceId: string;
  workspaceName: string;
  /** Their own role in the chosen workspace. */
  role: string;
  /** The roles they may grant there, never above theirs. */
  roles: readonly RoleOption[];
  /** The brands they may limit the assistant to (theirs). */
  brands: readonly { id: string; name: string; checked: boolean }[];
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

function signInSection(view: ConsentView): SafeHtml {
  if (view.signInHref === undefined) return html``;
  return html`<section aria-labelledby="with-account">
  <h2 id="with-account">Approve with your account</h2>
  <p><a href="${view.signInHref}">Sign in</a> to choose the workspace and what the app may do, up to your own role.</p>
  </section>`;
}

function personSection(view: ConsentView, person: PersonView): SafeHtml {
  const here = `${OAUTH_MOUNT}/interaction/${encodeURIComponent(view.uid)}`;
  const action = (path: string) => `${here}/${path}`;
  return html`<section aria-labelledby="with-account">
  <h2 id="with-account">Approve as ${person.email}</h2>
  ${person.workspaces.length > 1
    ? html`<form method="get" action="${here}">
    <label for="workspace_choice">Workspace</label>
    <select id="workspace_choice" name="workspace">
      ${person.workspaces.map((w) => html`<option value="${w.id}"${w.selected ? html` selected` : ''}>${w.name}</option>`)}
    </select>
    <div class="actions"><button type="submit">Choose this workspace</button></div>
  </form>`
    : ''}
  <form method="post" action="${action('confirm')}">
    <input type="hidden" name="csrf" value="${view.csrf}">
    <input type="hidden" name="as" value="person">
    <input type="hidden" name="workspace" value="${person.workspaceId}">
    <p class="note">In <strong>${person.workspaceName}</strong>, where your role is ${person.role}.</p>
    <label for="role">What the app may do</label>
    <select id="role" name="role">
      ${person.roles.map((r) => html`<option value="${r.value}"${r.selected ? html` selected` : ''}>${r.label}</option>`)}
    </select>
    ${person.brands.length === 0
      ? ''
      : html`<fieldset>
      <legend>Brands (none checked: all of yours)</legend>
      ${person.brands.map((b, i) => html`<label class="check" for="brand_${i}"><input id="brand_${i}" type="checkbox" name="brand_ids" value="${b.id}"${b.checked ? html` checked` : ''}> ${b.name}</label>`)}
    </fieldset>`}
    <div class="actions">
      <button class="primary" type="submit">Approve</button>
      <button type="submit" formaction="${action('abort')}" formnovalidate>Deny</button>
    </div>
  </form>
  </section>`;
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
    <dt>Access</dt><dd>${view.scope} — this service's tools (publish content, read its status, manage webhooks), as far as the role you give it below allows</dd>
    <dt>Returns to</dt><dd>${view.redirectHost}</dd>
  </dl>
  ${view.error === null ? '' : html`<p class="error" role="alert">${view.error}</p>`}
  ${view.person === undefined ? signInSection(view) : personSection(view, view.person)}
  <section aria-labelledby="with-key">
  <h2 id="with-key">${view.person === undefined ? 'Or approve with an API key' : 'Or approve with an API key instead'}</h2>
  <form method="post" action="${action('confirm')}">
    <input type="hidden" name="csrf" value="${view.csrf}">
    <label for="api_key">Your API key</label>
    <input id="api_key" name="api_key" type="password" autocomplete="off" required placeholder="svc_live_…"${view.person === undefined ? html` autofocus` : ''}>
    ${view.keyRoles === undefined ? '' : html`<label for="key_role">What the app may do, at most what the key may</label>
    <select id="key_role" name="role">
      <option value="">As the key itself</option>
      ${view.keyRoles.map((r) => html`<option value="${r.value}"${r.selected ? html` selected` : ''}>${r.label}</option>`)}
    </select>
`}
    <div class="actions">
      <button class="primary" type="submit">Approve</button>
      <button type="submit" formaction="${action('abort')}" formnovalidate>Deny</button>
    </div>
  </form>
  </section>
</main>
</body>
</html>`;
}
