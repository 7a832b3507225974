import { createApiKeyInputSchema } from '../../core/api-keys/api-keys.schema.js';
import { ServiceError } from '../../core/errors.js';
import { ROLES, roleWithin } from '../../core/permissions/roles.js';
import { errorAt, check, type FieldErrors } from '../forms.js';
import { html, type SafeHtml } from '../../web/html.js';
import { actionButton, badge, csrfField, describedBy, errorBanner, field, isoDate, secretOnce, table } from '../layout.js';
import type { PageContext, PageRouter } from '../page-router.js';

interface Values {
  name: string;
  revokeOthers: boolean;
  role: string;
  brandIds: string[];
}

/** API keys (spec 4.1): create (shown once) with a role and brands, revoke, rotate with `revoke_others`. */
export function apiKeyPages(pages: PageRouter): void {
  async function render(ctx: PageContext, extra: { created?: SafeHtml; errors?: FieldErrors; values?: Values; status?: number } = {}) {
    const [{ data: keys }, { data: brands }] = await Promise.all([ctx.deps.services.apiKeys.list(ctx.principal, ctx.workspaceId), ctx.deps.services.brands.list(ctx.principal, ctx.workspaceId)]);
    const nameError = errorAt(extra.errors, 'name');
    const brandsError = errorAt(extra.errors, 'brand_ids');
    const brandNames = new Map(brands.map((b) => [b.id, b.name]));
    const keyNames = new Map(keys.map((k) => [k.id, k.name]));
    // Only roles within the maker's own are offered; the core refuses any other.
    const roles = ROLES.filter((r) => roleWithin(r, ctx.principal.role));
    const role = extra.values?.role ?? 'admin';
    const creator = (id: string | null) => (id === null ? html`<span class="muted">the service</span>` : keyNames.has(id) ? html`key ${keyNames.get(id)}` : html`<code>${id}</code>`);
    const rows = keys.map((k) => {
      const own = k.id === ctx.principal.keyId;
      return html`<tr>
  <th scope="row">${k.name}${own ? html` <span class="muted">(this session)</span>` : ''}</th>
  <td>${k.starts_with !== null ? html`<code>${k.starts_with}…</code>` : html`<code>${k.prefix}…</code> <span class="muted">(an older key: its name tells it apart)</span>`}</td>
  <td>${k.role}</td>
  <td>${k.brand_ids === null ? 'every brand' : k.brand_ids.map((id) => brandNames.get(id) ?? id).join(', ')}</td>
  <td>${creator(k.created_by)}</td>
  <td>${isoDate(k.created_at)}</td>
  <td>${k.last_used_at ? isoDate(k.last_used_at) : 'never'}</td>
  <td>${k.revoked_at ? html`${badge('revoked')} ${isoDate(k.revoked_at)}` : badge('active')}</td>
  <td>${
    k.revoked_at
      ? ''
      : actionButton({
          action: `/dashboard/api-keys/${k.id}/revoke`,
          csrf: ctx.csrf,
          label: 'Revoke',
          danger: true,
          describe: `Revoke ${k.name}`,
          confirm: own ? 'This is the key of your session: revoking it signs you out. Revoke it?' : `Revoke ${k.name}? Requests with it will fail at once.`,
        })
  }</td>
</tr>`;
    });
    return {
      title: 'API keys',
      active: 'api-keys' as const,
      status: extra.status ?? 200,
      body: html`<h1>API keys</h1>
${extra.created ?? ''}
<section class="card" aria-labelledby="new-key-h">
  <h2 id="new-key-h">Create a key</h2>
  <p>One key per use (an automation, a CI job, an assistant), so a leaked key is revoked alone.</p>
  ${errorBanner(extra.errors?._)}
  <form method="post" action="/dashboard/api-keys">
    ${csrfField(ctx.csrf)}
    ${field({
      id: 'key-name',
      label: 'Name',
      hint: 'What the key is for, e.g. zapier or ci.',
      error: nameError,
      control: html`<input id="key-name" name="name" type="text" maxlength="100" required value="${extra.values?.name ?? ''}"${describedBy('key-name', { hint: true, error: nameError })}>`,
    })}
    ${field({
      id: 'key-role',
      label: 'Role',
      hint: 'What the key may do (the role matrix is in the README). Admin is what every key could do before roles.',
      control: html`<select id="key-role" name="role"${describedBy('key-role', { hint: true })}>${roles.map((r) => html`<option value="${r}"${r === role ? html` selected` : ''}>${r}</option>`)}</select>`,
    })}
    <fieldset class="field"${brandsError ? html` aria-describedby="key-brands-error"` : ''}>
      <legend>Brands</legend>
      <p class="hint">Leave all unticked for every brand, now and later; tick some to limit the key to them.</p>
      ${brandsError ? html`<p class="error" id="key-brands-error">${brandsError}</p>` : ''}
      ${brands.map(
        (b) => html`<div class="check"><input id="key-brand-${b.id}" name="brand_ids" type="checkbox" value="${b.id}"${extra.values?.brandIds.includes(b.id) ? html` checked` : ''}> <label for="key-brand-${b.id}">${b.name}</label></div>`,
      )}
    </fieldset>
    <div class="field check">
      <input id="revoke-others" name="revoke_others" type="checkbox" value="true"${extra.values?.revokeOthers ? html` checked` : ''} aria-describedby="revoke-others-hint">
      <label for="revoke-others">Revoke every other key (rotation)</label>
      <p class="hint" id="revoke-others-hint">In the same step, so there is no moment with both keys or neither. This session moves to the new key.</p>
    </div>
    <button type="submit" class="primary">Create key</button>
  </form>
</section>
<section class="card" aria-labelledby="keys-h">
  <h2 id="keys-h">Keys</h2>
  ${table({ caption: 'API keys of this workspace', head: ['Name', 'Starts with', 'Role', 'Brands', 'Created by', 'Created', 'Last used', 'Status', 'Action'], rows, empty: 'No keys.' })}
</section>`,
    };
  }

  pages.page('/dashboard/api-keys', (ctx) => render(ctx));

  pages.action('/dashboard/api-keys', async (ctx) => {
    const values: Values = { name: ctx.form.get('name'), revokeOthers: ctx.form.get('revoke_others') === 'true', role: ctx.form.get('role') || 'admin', brandIds: ctx.form.all('brand_ids') };
    const input = check(createApiKeyInputSchema, {
      name: values.name,
      role: values.role,
      ...(values.brandIds.length > 0 ? { brand_ids: values.brandIds } : {}),
      ...(values.revokeOthers ? { revoke_others: true } : {}),
    });
    if (!input.ok) return render(ctx, { errors: input.errors, values, status: 400 });
    let created;
    try {
      created = await ctx.deps.services.apiKeys.create(ctx.principal, ctx.workspaceId, input.data);
    } catch (err) {
      // A brand deleted since the page was drawn: said next to the brands, with what was typed kept.
      if (err instanceof ServiceError && err.code === 'validation_failed') return render(ctx, { errors: { brand_ids: err.message }, values, status: 400 });
      throw err;
    }
    // A session opened with a key that this rotation revoked carries on as the new key (a person's session has no key).
    const rebound = created.revoked_other_keys > 0 && ctx.principal.kind === 'api_key';
    if (rebound) await ctx.deps.services.sessions.rebind(ctx.sessionToken, created.id);
    const principal = rebound && ctx.principal.kind === 'api_key' ? { ...ctx.principal, keyId: created.id } : ctx.principal;
    const note = created.revoked_other_keys > 0 ? html`<p role="status">${created.revoked_other_keys} other key(s) were revoked; this session now uses the new key.</p>` : '';
    return render(
      { ...ctx, principal },
      { status: 201, created: html`<section class="card created" aria-labelledby="created-h"><h2 id="created-h">Key “${created.name}” created</h2>${note}${secretOnce({ id: 'new-api-key', label: 'Your new API key', value: created.api_key })}</section>` },
    );
  });

  pages.action('/dashboard/api-keys/:keyId/revoke', async (ctx) => {
    const keyId = ctx.params.keyId!;
    try {
      await ctx.deps.services.apiKeys.revoke(ctx.principal, ctx.workspaceId, keyId);
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'not_found') return { redirect: '/dashboard/api-keys', flash: 'That key no longer exists.' };
      throw err;
    }
    if (keyId === ctx.principal.keyId) return { redirect: '/dashboard/sign-in?reason=key_revoked' };
    return { redirect: '/dashboard/api-keys', flash: 'The key was revoked. Requests with it now fail.' };
  });
}
