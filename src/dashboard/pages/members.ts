import { ServiceError } from '../../core/errors.js';
import { allows } from '../../core/permissions/authorize.js';
import { ROLES, type Role, roleWithin } from '../../core/permissions/roles.js';
import { createInvitationInputSchema, updateMemberInputSchema } from '../../core/members/members.schema.js';
import { html, type SafeHtml } from '../../web/html.js';
import { check, errorAt, type FieldErrors, fieldErrorsOf } from '../forms.js';
import { actionButton, badge, csrfField, describedBy, errorBanner, field, isoDate, secretOnce, table } from '../layout.js';
import type { PageContext, PageResult, PostedForm, PageRouter } from '../page-router.js';

type Brand = { id: string; name: string };

/** The roles the signed-in credential may hand out (the core decides again on submit). */
function grantableRoles(ctx: PageContext): Role[] {
  return ROLES.filter((r) => roleWithin(r, ctx.principal.role) && (r !== 'owner' || allows(ctx.principal, 'members.manage_owners')));
}

function roleSelect(id: string, roles: readonly Role[], selected: Role, error?: string): SafeHtml {
  return html`<select id="${id}" name="role"${describedBy(id, { error })}>${roles.map((r) => html`<option value="${r}"${r === selected ? html` selected` : ''}>${r}</option>`)}</select>`;
}

/** Every brand, or only the ticked ones: radios and checkboxes that work without scripts. */
function brandChoice(idPrefix: string, brands: readonly Brand[], selected: readonly string[] | null, error?: string): SafeHtml {
  if (brands.length === 0) return html``;
  return html`<fieldset>
  <legend>Brands</legend>
  <div class="field check"><input id="${idPrefix}-all" type="radio" name="scope" value="all"${selected === null ? html` checked` : ''}><label for="${idPrefix}-all">Every brand</label></div>
  <div class="field check"><input id="${idPrefix}-some" type="radio" name="scope" value="some"${selected !== null ? html` checked` : ''}><label for="${idPrefix}-some">Only the brands ticked below</label></div>
  ${brands.map(
    (b) =>
      html`<div class="field check"><input id="${idPrefix}-${b.id}" type="checkbox" name="brand_ids" value="${b.id}"${selected?.includes(b.id) ? html` checked` : ''}><label for="${idPrefix}-${b.id}">${b.name}</label></div>`,
  )}
  ${error ? html`<p class="field-error">${error}</p>` : ''}
</fieldset>`;
}

/** The brand list a form asked for: null for every brand (also when the workspace has none to choose). */
function brandsFrom(form: PostedForm): string[] | null {
  return form.get('scope') === 'some' ? form.all('brand_ids') : null;
}

function brandNames(ids: readonly string[] | null, brands: readonly Brand[]): string {
  if (ids === null) return 'every brand';
  return ids.map((id) => brands.find((b) => b.id === id)?.name ?? id).join(', ') || 'none';
}

/** Members and invitations: list, invite (the link shown once), change a role or brands, remove, revoke. */
export function memberPages(pages: PageRouter): void {
  async function render(ctx: PageContext, extra: { created?: SafeHtml; errors?: FieldErrors; values?: { email: string; role: Role; brandIds: string[] | null }; status?: number } = {}): Promise<PageResult> {
    const { services } = ctx.deps;
    const manage = allows(ctx.principal, 'members.manage');
    const [{ data: members }, { data: invitations }, { data: brands }] = await Promise.all([
      services.members.list(ctx.principal, ctx.workspaceId),
      services.invitations.list(ctx.principal, ctx.workspaceId),
      services.brands.list(ctx.principal, ctx.workspaceId),
    ]);
    const roles = grantableRoles(ctx);
    const mayTouch = (role: Role) => manage && (role !== 'owner' || allows(ctx.principal, 'members.manage_owners'));
    const memberRows = members.map((m) => {
      const label = m.name ? `${m.name} (${m.email})` : m.email;
      const you = ctx.principal.kind === 'user' && ctx.principal.userId === m.user_id;
      return html`<tr>
  <th scope="row">${label}${you ? html` <span class="muted">(you)</span>` : ''}</th>
  <td>${badge(m.role)}</td>
  <td>${brandNames(m.brand_ids, brands)}</td>
  <td>${isoDate(m.created_at)}</td>
  <td>${
    mayTouch(m.role)
      ? html`<details><summary>Change<span class="vh"> ${label}</span></summary>
  <form method="post" action="/dashboard/members/${m.id}">
    ${csrfField(ctx.csrf)}
    ${field({ id: `role-${m.id}`, label: 'Role', control: roleSelect(`role-${m.id}`, roles.includes(m.role) ? roles : [m.role, ...roles], m.role) })}
    ${brandChoice(`brands-${m.id}`, brands, m.brand_ids)}
    <button type="submit">Save</button>
  </form>
</details>
${actionButton({ action: `/dashboard/members/${m.id}/remove`, csrf: ctx.csrf, label: 'Remove', danger: true, describe: `Remove ${label}`, confirm: `Remove ${label} from this workspace? Their sessions here end at once.` })}`
      : ''
  }</td>
</tr>`;
    });
    const pending = invitations.filter((i) => i.status === 'pending');
    const invitationRows = pending.map(
      (i) => html`<tr>
  <th scope="row">${i.email ?? 'first owner link'}</th>
  <td>${badge(i.role)}</td>
  <td>${brandNames(i.brand_ids, brands)}</td>
  <td>${isoDate(i.expires_at)}</td>
  <td>${mayTouch(i.role) ? actionButton({ action: `/dashboard/invitations/${i.id}/revoke`, csrf: ctx.csrf, label: 'Revoke', danger: true, describe: `Revoke the invitation of ${i.email ?? 'the first owner'}` }) : ''}</td>
</tr>`,
    );
    const emailError = errorAt(extra.errors, 'email');
    const roleError = errorAt(extra.errors, 'role');
    const brandError = errorAt(extra.errors, 'brand_ids');
    const invite = manage
      ? html`<section class="card" aria-labelledby="invite-h">
  <h2 id="invite-h">Invite a person</h2>
  <p>They get a one-time link, valid 7 days, to make their account (or sign in) and join with this role.</p>
  ${errorBanner(extra.errors?._)}
  <form method="post" action="/dashboard/members/invite" novalidate>
    ${csrfField(ctx.csrf)}
    ${field({
      id: 'invite-email',
      label: 'Email',
      error: emailError,
      control: html`<input id="invite-email" name="email" type="email" required maxlength="254" value="${extra.values?.email ?? ''}"${describedBy('invite-email', { error: emailError })}>`,
    })}
    ${field({ id: 'invite-role', label: 'Role', error: roleError, control: roleSelect('invite-role', roles, extra.values?.role ?? (roles.includes('editor') ? 'editor' : roles[roles.length - 1]!), roleError) })}
    ${brandChoice('invite-brands', brands, extra.values?.brandIds ?? null, brandError)}
    <button type="submit" class="primary">Invite</button>
  </form>
</section>`
      : '';
    return {
      title: 'Members',
      active: 'members',
      status: extra.status ?? 200,
      body: html`<h1>Members</h1>
${extra.created ?? ''}
<section class="card" aria-labelledby="members-h">
  <h2 id="members-h">People in this workspace</h2>
  ${table({ caption: 'Members of this workspace', head: ['Person', 'Role', 'Brands', 'Since', 'Action'], rows: memberRows, empty: 'No people yet: invite someone below.' })}
</section>
<section class="card" aria-labelledby="invitations-h">
  <h2 id="invitations-h">Pending invitations</h2>
  ${table({ caption: 'Pending invitations', head: ['Email', 'Role', 'Brands', 'Expires', 'Action'], rows: invitationRows, empty: 'No pending invitations.' })}
</section>
${invite}`,
    };
  }

  pages.page('/dashboard/members', (ctx) => render(ctx));

  pages.action('/dashboard/members/invite', async (ctx) => {
    const values = { email: ctx.form.get('email').trim(), role: ctx.form.get('role') as Role, brandIds: brandsFrom(ctx.form) };
    const input = check(createInvitationInputSchema, { email: values.email, role: values.role, ...(values.brandIds === null ? {} : { brand_ids: values.brandIds }) });
    if (!input.ok) return render(ctx, { errors: input.errors, values, status: 400 });
    try {
      const created = await ctx.deps.services.invitations.invite(ctx.principal, ctx.workspaceId, input.data);
      const note = created.mailed ? `It was also mailed to ${created.email ?? ''}.` : 'Pass it on to them: it is shown only now.';
      return render(ctx, {
        status: 201,
        created: html`<section class="card created" aria-labelledby="invited-h"><h2 id="invited-h">${created.email ?? ''} invited as ${created.role}</h2>${secretOnce({ id: 'invitation-link', label: 'Invitation link', value: created.accept_url, note })}</section>`,
      });
    } catch (err) {
      const errors = fieldErrorsOf(err);
      if (errors) return render(ctx, { errors, values, status: 400 });
      throw err;
    }
  });

  pages.action('/dashboard/members/:memberId', async (ctx) => {
    const input = check(updateMemberInputSchema, { role: ctx.form.get('role'), brand_ids: brandsFrom(ctx.form) });
    if (!input.ok) return render(ctx, { errors: input.errors, status: 400 });
    try {
      await ctx.deps.services.members.update(ctx.principal, ctx.workspaceId, ctx.params.memberId!, input.data);
    } catch (err) {
      if (err instanceof ServiceError && err.code !== 'server_error') return { redirect: '/dashboard/members', flash: err.message };
      throw err;
    }
    return { redirect: '/dashboard/members', flash: 'The member was changed.' };
  });

  pages.action('/dashboard/members/:memberId/remove', async (ctx) => {
    try {
      await ctx.deps.services.members.remove(ctx.principal, ctx.workspaceId, ctx.params.memberId!);
    } catch (err) {
      if (err instanceof ServiceError && (err.code === 'last_owner' || err.code === 'not_found')) return { redirect: '/dashboard/members', flash: err.message };
      throw err;
    }
    return { redirect: '/dashboard/members', flash: 'The member was removed; their sessions in this workspace ended.' };
  });

  pages.action('/dashboard/invitations/:invitationId/revoke', async (ctx) => {
    try {
      await ctx.deps.services.invitations.revoke(ctx.principal, ctx.workspaceId, ctx.params.invitationId!);
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'not_found') return { redirect: '/dashboard/members', flash: err.message };
      throw err;
    }
    return { redirect: '/dashboard/members', flash: 'The invitation was revoked; its link no longer works.' };
  });
}
