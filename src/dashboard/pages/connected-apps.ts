import type { ConnectedApp } from '../../core/connected-apps/connected-apps.schema.js';
import { ServiceError } from '../../core/errors.js';
import { html } from '../../web/html.js';
import { actionButton, isoDate, table } from '../layout.js';
import type { PageRouter } from '../page-router.js';
import { CONNECT_ASSISTANT } from './connect-assistant.js';

export const CONNECTED_APPS = '/dashboard/connected-apps';

const KIND_LABEL: Record<ConnectedApp['kind'], string> = {
  registered: 'Registered client',
  metadata_document: 'Metadata document',
};

/**
 * Connected apps: every client holding an approval of this workspace (MCP hosts that registered, clients the
 * workspace made for assistant builders, and clients known only by their metadata document), with a Revoke
 * button that disconnects one at once.
 */
export function connectedAppPages(pages: PageRouter): void {
  pages.page(CONNECTED_APPS, async (ctx) => {
    const { data } = await ctx.deps.services.connectedApps.list(ctx.principal, ctx.workspaceId);
    const rows = data.map(
      (app) => html`<tr>
  <th scope="row">${app.client_name}</th>
  <td>${app.host === '' ? '' : html`${app.host}<br>`}<code>${app.client_id}</code></td>
  <td>${KIND_LABEL[app.kind]}</td>
  <td>${isoDate(app.connected_at)}</td>
  <td>${isoDate(app.last_authorized_at)}</td>
  <td>${app.active_tokens}</td>
  <td>${app.approvals.length === 0 ? 'As the approving key' : app.approvals.map((a, i) => html`${i > 0 ? html`<br>` : ''}${a.role}${a.brand_ids === null ? '' : ` (${a.brand_ids.length} brand${a.brand_ids.length === 1 ? '' : 's'})`}, by ${a.approved_by.label ?? a.approved_by.id}`)}</td>
  <td>${actionButton({
    action: `${CONNECTED_APPS}/revoke`,
    csrf: ctx.csrf,
    label: 'Revoke',
    danger: true,
    fields: { client_id: app.client_id },
    describe: `Revoke ${app.client_name}`,
    confirm: `Revoke ${app.client_name}? Its tokens stop working at once; it must be approved again to reconnect.`,
  })}</td>
</tr>`,
    );
    return {
      title: 'Connected apps',
      active: 'connected-apps',
      body: html`<h1>Connected apps</h1>
<p>Apps that a member or an API key of this workspace approved, each with the role it was given: assistants and editors connected over MCP, and assistant builders using a client of this workspace. The name is the app's own; the host is where it comes from (for an app known by its metadata document, the host that publishes the document).</p>
<section class="card" aria-labelledby="apps-h">
  <h2 id="apps-h">Apps</h2>
  ${table({ caption: 'Apps connected to this workspace', head: ['App', 'Host and client ID', 'Kind', 'Connected', 'Last authorized', 'Active tokens', 'Role and approver', 'Action'], rows, empty: 'No app is connected to this workspace.' })}
  ${data.length === 0 ? html`<p><a href="${CONNECT_ASSISTANT}">Connect an assistant</a>: the address to give Claude, ChatGPT, VS Code or Cursor, and what to paste where.</p>` : ''}
  <p>Revoking an app ends its approvals and tokens for this workspace only; the app must be approved again to reconnect.</p>
</section>`,
    };
  });

  pages.action(`${CONNECTED_APPS}/revoke`, async (ctx) => {
    const clientId = ctx.form.get('client_id');
    const apps = ctx.deps.services.connectedApps;
    const app = (await apps.list(ctx.principal, ctx.workspaceId)).data.find((a) => a.client_id === clientId);
    try {
      await apps.revoke(ctx.principal, ctx.workspaceId, clientId);
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'not_found') return { redirect: CONNECTED_APPS, flash: 'That app was no longer connected.' };
      throw err;
    }
    return { redirect: CONNECTED_APPS, flash: `“${app?.client_name ?? clientId}” was disconnected: its tokens no longer work.` };
  });
}
