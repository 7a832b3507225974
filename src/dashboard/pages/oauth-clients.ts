import { ServiceError } from '../../core/errors.js';
import { createOAuthClientInputSchema, type OAuthClient, updateOAuthClientInputSchema } from '../../core/oauth-clients/oauth-clients.schema.js';
import { MCP_SCOPE, OAUTH_MOUNT } from '../../core/oauth-clients/oauth-clients.service.js';
import { check, errorAt, type FieldErrors } from '../forms.js';
import { html, type SafeHtml } from '../../web/html.js';
import { actionButton, csrfField, describedBy, errorBanner, field, isoDate, secretOnce, table } from '../layout.js';
import type { PageContext, PageRouter } from '../page-router.js';

const LIST = '/dashboard/oauth-clients';
const MAX_URIS = 10;
const EXAMPLE_CALLBACK = 'https://chat.openai.com/aip/g-…/oauth/callback';

interface ClientValues {
  name: string;
  redirectUris: string;
}

/** The non-empty lines of the textarea, each with its line number, so an error can name the line the person typed. */
function linesOf(text: string): { line: number; value: string }[] {
  return text
    .split(/\r?\n/)
    .map((value, i) => ({ line: i + 1, value: value.trim() }))
    .filter((l) => l.value !== '');
}

/** What the form says, in the shape of the core's create and update input. */
function inputOf(values: ClientValues) {
  return { client_name: values.name, redirect_uris: linesOf(values.redirectUris).map((l) => l.value) };
}

/** The schema's errors rewritten for people: which line of the textarea is wrong, and why. */
function explainErrors(raw: FieldErrors, values: ClientValues): FieldErrors {
  const lines = linesOf(values.redirectUris);
  const errors: FieldErrors = {};
  if (errorAt(raw, 'client_name') !== undefined) errors.client_name = values.name.trim() === '' ? 'Enter a name.' : 'Use at most 100 characters.';
  if (lines.length === 0) errors.redirect_uris = 'Enter at least one redirect URI, one per line.';
  else if (lines.length > MAX_URIS) errors.redirect_uris = `Enter at most ${MAX_URIS} redirect URIs.`;
  else {
    const bad = Object.keys(raw)
      .map((key) => /^redirect_uris\[(\d+)\]$/.exec(key))
      .find((m) => m !== null);
    const at = bad ? lines[Number(bad[1])] : undefined;
    if (at) {
      const why = at.value.length > 2048 ? 'it is longer than 2,048 characters.' : 'it must be an https address (or http on this computer: localhost, 127.0.0.1) without a # part.';
      errors.redirect_uris = `Line ${at.line} (${at.value}) is not accepted: ${why}`;
    }
  }
  if (Object.keys(errors).length === 0) errors._ = Object.values(raw)[0] ?? 'The form could not be accepted.';
  return errors;
}

/** Name and redirect URIs, shared by the create and the edit form. */
function clientFields(prefix: string, values: ClientValues, errors: FieldErrors | undefined): SafeHtml {
  const nameId = `${prefix}-name`;
  const urisId = `${prefix}-redirect-uris`;
  const nameError = errors?.client_name;
  const urisError = errors?.redirect_uris;
  return html`${field({
    id: nameId,
    label: 'Client name',
    hint: 'People see it on the consent page when they approve access.',
    error: nameError,
    control: html`<input id="${nameId}" name="client_name" type="text" maxlength="100" required value="${values.name}"${describedBy(nameId, { hint: true, error: nameError })}>`,
  })}
${field({
  id: urisId,
  label: 'Redirect URIs',
  hint: html`One per line, up to ${MAX_URIS}: where the assistant builder receives the approval, e.g. <code>${EXAMPLE_CALLBACK}</code>. If the real one is not known yet, put a placeholder and edit it later.`,
  error: urisError,
  control: html`<textarea id="${urisId}" name="redirect_uris" rows="4" required spellcheck="false"${describedBy(urisId, { hint: true, error: urisError })}>${values.redirectUris}</textarea>`,
})}`;
}

function endpoints(baseUrl: string): SafeHtml {
  const base = baseUrl.replace(/\/+$/, '');
  const rows: [string, string][] = [
    ['Authorization server metadata', `${base}/.well-known/oauth-authorization-server`],
    ['Authorization URL', `${base}${OAUTH_MOUNT}/authorize`],
    ['Token URL', `${base}${OAUTH_MOUNT}/token`],
    ['Scope', MCP_SCOPE],
    ['MCP endpoint', `${base}/mcp`],
  ];
  return html`<dl>${rows.map(([term, value]) => html`<dt>${term}</dt><dd><code>${value}</code></dd>`)}</dl>`;
}

/** Confidential OAuth clients (spec 4.2) for assistant builders: create (secret shown once), edit, delete. */
export function oauthClientPages(pages: PageRouter): void {
  async function renderList(ctx: PageContext, extra: { created?: SafeHtml; errors?: FieldErrors; values?: ClientValues; status?: number } = {}) {
    const { data: clients } = await ctx.deps.services.oauthClients.list(ctx.principal, ctx.workspaceId);
    const rows = clients.map(
      (c) => html`<tr>
  <th scope="row">${c.client_name}</th>
  <td><code>${c.client_id}</code></td>
  <td>${c.redirect_uris.map((u, i) => html`${i > 0 ? html`<br>` : ''}<code>${u}</code>`)}</td>
  <td>${isoDate(c.created_at)}</td>
  <td><a href="${LIST}/${c.client_id}">Edit ${c.client_name}</a></td>
</tr>`,
    );
    return {
      title: 'OAuth clients',
      active: 'oauth-clients' as const,
      status: extra.status ?? 200,
      body: html`<h1>OAuth clients</h1>
<p>An OAuth client lets an assistant builder (such as a custom GPT action) act for this workspace: a person approves it with their own API key on the consent page, and the assistant then publishes through the MCP endpoint without ever seeing that key.</p>
${extra.created ?? ''}
<section class="card" aria-labelledby="new-client-h">
  <h2 id="new-client-h">Create a client</h2>
  ${errorBanner(extra.errors?._)}
  <form method="post" action="${LIST}">
    ${csrfField(ctx.csrf)}
    ${clientFields('client', extra.values ?? { name: '', redirectUris: '' }, extra.errors)}
    <button type="submit" class="primary">Create client</button>
  </form>
</section>
<section class="card" aria-labelledby="clients-h">
  <h2 id="clients-h">Clients</h2>
  ${table({ caption: 'OAuth clients of this workspace', head: ['Name', 'Client ID', 'Redirect URIs', 'Created', 'Action'], rows, empty: 'No OAuth clients yet.' })}
</section>
<section class="card" aria-labelledby="endpoints-h">
  <h2 id="endpoints-h">Endpoints for the assistant builder</h2>
  <p>Enter these with the client ID and secret. The token endpoint takes the secret in the request body (client_secret_post); HTTP Basic works too.</p>
  ${endpoints(ctx.deps.baseUrl)}
</section>`,
    };
  }

  function created(client: OAuthClient & { client_secret: string }): SafeHtml {
    return html`<section class="card created" aria-labelledby="created-h">
  <h2 id="created-h">Client “${client.client_name}” created</h2>
  <div class="field">
    <label for="new-client-id">Client ID</label>
    <div class="secret-row">
      <input id="new-client-id" type="text" readonly value="${client.client_id}" spellcheck="false">
      <button type="button" data-copy="new-client-id" aria-label="Copy client ID">Copy</button>
    </div>
  </div>
  ${secretOnce({ id: 'new-client-secret', label: 'Client secret', value: client.client_secret })}
</section>`;
  }

  pages.page(LIST, (ctx) => renderList(ctx));

  pages.action(LIST, async (ctx) => {
    const values = { name: ctx.form.get('client_name'), redirectUris: ctx.form.get('redirect_uris') };
    const input = check(createOAuthClientInputSchema, inputOf(values));
    if (!input.ok) return renderList(ctx, { errors: explainErrors(input.errors, values), values, status: 400 });
    const client = await ctx.deps.services.oauthClients.create(ctx.principal, ctx.workspaceId, input.data);
    return renderList(ctx, { status: 201, created: created(client) });
  });

  async function renderEdit(ctx: PageContext, extra: { errors?: FieldErrors; values?: ClientValues; status?: number } = {}) {
    const client = await ctx.deps.services.oauthClients.get(ctx.principal, ctx.workspaceId, ctx.params.clientId!);
    const values = extra.values ?? { name: client.client_name, redirectUris: client.redirect_uris.join('\n') };
    const action = `${LIST}/${client.client_id}`;
    return {
      title: `OAuth client ${client.client_name}`,
      active: 'oauth-clients' as const,
      status: extra.status ?? 200,
      body: html`<h1>OAuth client</h1>
<p><a href="${LIST}">All OAuth clients</a></p>
<section class="card" aria-labelledby="edit-client-h">
  <h2 id="edit-client-h">${client.client_name}</h2>
  <p>Client ID <code>${client.client_id}</code>, created ${isoDate(client.created_at)}. The secret was shown once when the client was created; to get a new one, create another client and delete this one.</p>
  ${errorBanner(extra.errors?._)}
  <form method="post" action="${action}">
    ${csrfField(ctx.csrf)}
    ${clientFields('edit', values, extra.errors)}
    <button type="submit" class="primary">Save changes</button>
  </form>
</section>
<section class="card" aria-labelledby="delete-client-h">
  <h2 id="delete-client-h">Delete this client</h2>
  <p>Its grants and tokens stop working at once: the assistant using it must be connected again with a new client.</p>
  ${actionButton({
    action: `${action}/delete`,
    csrf: ctx.csrf,
    label: 'Delete client',
    danger: true,
    confirm: `Delete ${client.client_name}? Its grants and tokens stop working at once.`,
  })}
</section>`,
    };
  }

  pages.page(`${LIST}/:clientId`, (ctx) => renderEdit(ctx));

  pages.action(`${LIST}/:clientId`, async (ctx) => {
    const clientId = ctx.params.clientId!;
    const values = { name: ctx.form.get('client_name'), redirectUris: ctx.form.get('redirect_uris') };
    const input = check(updateOAuthClientInputSchema, inputOf(values));
    if (!input.ok) return renderEdit(ctx, { errors: explainErrors(input.errors, values), values, status: 400 });
    await ctx.deps.services.oauthClients.update(ctx.principal, ctx.workspaceId, clientId, input.data);
    return { redirect: `${LIST}/${clientId}`, flash: 'Changes saved.' };
  });

  pages.action(`${LIST}/:clientId/delete`, async (ctx) => {
    let name: string;
    try {
      name = (await ctx.deps.services.oauthClients.get(ctx.principal, ctx.workspaceId, ctx.params.clientId!)).client_name;
      await ctx.deps.services.oauthClients.remove(ctx.principal, ctx.workspaceId, ctx.params.clientId!);
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'not_found') return { redirect: LIST, flash: 'That client no longer exists.' };
      throw err;
    }
    return { redirect: LIST, flash: `The client “${name}” was deleted. Its grants and tokens no longer work.` };
  });
}
