import { type AuditEntry, auditLogQuerySchema } from '../../core/audit/audit.schema.js';
import { check, type FieldErrors, fieldErrorsOf, optional } from '../forms.js';
import { html, type SafeHtml } from '../../web/html.js';
import { errorBanner, field, isoDate, table } from '../layout.js';
import type { PageRouter } from '../page-router.js';

export const AUDIT_LOG = '/dashboard/audit-log';

const PAGE_SIZE = 50;

const ACTOR_KIND: Record<AuditEntry['actor']['type'], string> = {
  user: 'Person',
  api_key: 'API key',
  oauth: 'Assistant (OAuth)',
  system: 'Service',
};

/** The filters a person types, by query parameter, in the words shown beside each. */
const FILTERS = [
  { name: 'action', label: 'Action', hint: 'e.g. content.canceled, brand.created' },
  { name: 'actor_id', label: 'Actor ID', hint: 'key_…, usr_… or an OAuth client id' },
  { name: 'target_type', label: 'Target type', hint: 'brand, connection, content, media, webhook, oauth_client, …' },
  { name: 'target_id', label: 'Target ID', hint: '' },
] as const;

/** A day picked in a date field (UTC) as the instant the filter compares with; `to` includes the whole day. */
function dayBound(day: string | undefined, end: boolean): string | undefined {
  if (day === undefined) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return day;
  const start = Date.parse(`${day}T00:00:00Z`);
  if (Number.isNaN(start)) return day;
  return new Date(end ? start + 86_400_000 : start).toISOString();
}

function actorCell(entry: AuditEntry): SafeHtml {
  const { actor } = entry;
  return html`${actor.label ?? ACTOR_KIND[actor.type]}<span class="row-meta">${ACTOR_KIND[actor.type]}${actor.role ? ` · ${actor.role}` : ''}${actor.id ? html` · <code>${actor.id}</code>` : ''}</span>`;
}

const DETAILS_CHARS = 200;

/** What changed, as `name: value` pairs on one line, cut short: the full details are in the API's entry. */
function detailsText(details: Record<string, unknown> | null): string {
  if (details === null) return '';
  const text = Object.entries(details)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join('; ');
  return text.length > DETAILS_CHARS ? `${text.slice(0, DETAILS_CHARS)}…` : text;
}

function targetCell(entry: AuditEntry): SafeHtml {
  const { target } = entry;
  const details = detailsText(entry.details);
  const what = target === null ? html`—` : html`${target.label ?? target.id}<span class="row-meta">${target.type} · <code>${target.id}</code></span>`;
  return html`${what}${details ? html`<span class="row-meta">${details}</span>` : ''}`;
}

function originCell(entry: AuditEntry): SafeHtml {
  return html`${entry.via}${entry.ip ? html`<span class="row-meta">${entry.ip}</span>` : ''}${entry.request_id ? html`<span class="row-meta"><code>${entry.request_id}</code></span>` : ''}`;
}

/** The audit log: who changed what, filtered and paged like the REST list, for owners and admins. */
export function auditLogPages(pages: PageRouter): void {
  pages.page(AUDIT_LOG, async (ctx) => {
    const raw: Record<string, string | undefined> = {};
    for (const f of FILTERS) raw[f.name] = optional(ctx.query[f.name] ?? '');
    const fromDay = optional(ctx.query.from ?? '');
    const toDay = optional(ctx.query.to ?? '');
    const cursor = optional(ctx.query.cursor ?? '');
    const query = check(auditLogQuerySchema, { ...raw, from: dayBound(fromDay, false), to: dayBound(toDay, true), cursor, limit: PAGE_SIZE });
    let errors: FieldErrors | null = query.ok ? null : query.errors;
    let found: Awaited<ReturnType<typeof ctx.deps.services.audit.list>> | null = null;
    if (query.ok) {
      try {
        found = await ctx.deps.services.audit.list(ctx.principal, ctx.workspaceId, query.data);
      } catch (err) {
        // A damaged cursor is the visitor's link, refused by the core; forbidden and anything else go on up.
        errors = fieldErrorsOf(err);
        if (!errors) throw err;
      }
    }
    const keep = (extra: Record<string, string>) => {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries({ ...raw, from: fromDay, to: toDay })) if (v !== undefined) params.set(k, v);
      for (const [k, v] of Object.entries(extra)) params.set(k, v);
      const text = params.toString();
      return `${AUDIT_LOG}${text ? `?${text}` : ''}`;
    };
    const messages = errors ? Object.entries(errors).map(([path, message]) => `${path === '_' ? '' : `${path}: `}${message}`) : [];
    const rows = (found?.data ?? []).map(
      (e) => html`<tr>
  <th scope="row">${isoDate(e.occurred_at)}</th>
  <td><code>${e.action}</code></td>
  <td>${actorCell(e)}</td>
  <td>${targetCell(e)}</td>
  <td>${originCell(e)}</td>
</tr>`,
    );
    const input = (id: string, name: string, value: string | undefined, type = 'text', hint = false) =>
      html`<input id="${id}" name="${name}" type="${type}"${value === undefined ? '' : html` value="${value}"`}${type === 'text' ? html` maxlength="100"` : ''}${hint ? html` aria-describedby="${id}-hint"` : ''}>`;
    return {
      title: 'Audit log',
      active: 'audit-log',
      status: errors ? 400 : 200,
      body: html`<h1>Audit log</h1>
<p>Every change in this workspace: who made it (a person, an API key or an assistant, with the role used), what it was made to, when, and from which address and request. Times are UTC.</p>
${errorBanner(messages.length > 0 ? 'The audit log could not be filtered this way.' : null, html`<ul>${messages.map((m) => html`<li>${m}</li>`)}</ul><p><a href="${AUDIT_LOG}">Show the newest entries</a></p>`)}
<section class="card" aria-labelledby="audit-filter-h">
  <h2 id="audit-filter-h">Filter</h2>
  <form method="get" action="${AUDIT_LOG}" class="filters">
    ${FILTERS.map((f) => field({ id: `audit-${f.name}`, label: f.label, ...(f.hint ? { hint: f.hint } : {}), control: input(`audit-${f.name}`, f.name, raw[f.name], 'text', f.hint !== '') }))}
    ${field({ id: 'audit-from', label: 'From (day, UTC)', control: input('audit-from', 'from', fromDay, 'date') })}
    ${field({ id: 'audit-to', label: 'To (day, UTC, included)', control: input('audit-to', 'to', toDay, 'date') })}
    <button type="submit">Filter</button>
  </form>
</section>
${
  found
    ? html`<section class="card" aria-labelledby="audit-list-h">
  <h2 id="audit-list-h">Entries${cursor ? ' (older)' : ''}</h2>
  ${table({ id: 'audit-entries', caption: 'Audit log entries, newest first', head: ['When', 'Action', 'Who', 'What', 'From'], rows, empty: 'No entry matches.' })}
  ${
    found.next_cursor || cursor
      ? html`<p>${found.next_cursor ? html`<a href="${keep({ cursor: found.next_cursor })}">Older entries</a>` : ''}${cursor ? html`${found.next_cursor ? ' · ' : ''}<a href="${keep({})}">Newest entries</a>` : ''}</p>`
      : ''
  }
</section>`
    : ''
}`,
    };
  });
}
