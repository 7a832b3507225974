import { escapeHtml, html, type Renderable, SafeHtml } from '../web/html.js';

/** The sections of the dashboard, in navigation order. */
export const SECTIONS = [
  { id: 'overview', href: '/dashboard', label: 'Overview' },
  { id: 'compose', href: '/dashboard/compose', label: 'Compose' },
  { id: 'calendar', href: '/dashboard/calendar', label: 'Calendar' },
  { id: 'drafts', href: '/dashboard/drafts', label: 'Drafts' },
  { id: 'approvals', href: '/dashboard/approvals', label: 'Approvals' },
  { id: 'contents', href: '/dashboard/contents', label: 'Contents' },
  { id: 'media', href: '/dashboard/media', label: 'Media' },
  { id: 'brands', href: '/dashboard/brands', label: 'Brands & connections' },
  { id: 'webhooks', href: '/dashboard/webhooks', label: 'Webhooks' },
  { id: 'api-keys', href: '/dashboard/api-keys', label: 'API keys' },
  { id: 'members', href: '/dashboard/members', label: 'Members' },
  { id: 'connect-assistant', href: '/dashboard/connect-assistant', label: 'Connect an assistant' },
  { id: 'connected-apps', href: '/dashboard/connected-apps', label: 'Connected apps' },
  { id: 'oauth-clients', href: '/dashboard/oauth-clients', label: 'OAuth clients' },
  { id: 'wallet', href: '/dashboard/wallet', label: 'Wallet' },
  { id: 'audit-log', href: '/dashboard/audit-log', label: 'Audit log' },
] as const;

export type SectionId = (typeof SECTIONS)[number]['id'];

export interface ShellOptions {
  title: string;
  body: SafeHtml;
  /** The signed-in part: navigation and sign-out. Absent on the sign-in and error pages of a signed-out visitor. */
  session?: {
    workspaceId: string;
    csrf: string;
    active?: SectionId | undefined;
    /** Shown instead of the id when known. */
    workspaceName?: string | undefined;
    /** A person signed in (not an API key): who, with which role here, and their other workspaces. */
    person?: PersonHeader | undefined;
    /** The sections the credential's role may use (`sectionsFor`); absent: every section. */
    sections?: readonly SectionId[] | undefined;
  };
  flash?: string | null | undefined;
}

/** Who is signed in, for the header: their email, their role in this workspace, the workspaces to switch to. */
export interface PersonHeader {
  email: string;
  role: string;
  workspaces: readonly { id: string; name: string }[];
}

/** The signed-in person, their account link and, with several workspaces, the switcher. */
function personPart(session: NonNullable<ShellOptions['session']>): SafeHtml | string {
  const person = session.person;
  if (!person) return '';
  return html`<div class="person">
    <p><a href="/dashboard/account">${person.email}</a> <span class="role">(${person.role})</span></p>
    ${
      person.workspaces.length > 1
        ? html`<form method="post" action="/dashboard/account/workspace" class="switcher">
      <input type="hidden" name="csrf" value="${session.csrf}">
      <label for="switch-workspace">Workspace</label>
      <select id="switch-workspace" name="workspace_id">${person.workspaces.map((w) => html`<option value="${w.id}"${w.id === session.workspaceId ? html` selected` : ''}>${w.name}</option>`)}</select>
      <button type="submit">Switch</button>
    </form>`
        : ''
    }
  </div>`;
}

/** The page shell every dashboard page shares: skip link, header with navigation, main landmark. */
export function shell(options: ShellOptions): SafeHtml {
  const { session } = options;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · Publisher dashboard</title>
<link rel="stylesheet" href="/dashboard/assets/app.css">
<link rel="icon" href="/dashboard/assets/favicon.svg" type="image/svg+xml">
<script type="module" src="/dashboard/assets/app.js"></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <p class="brand"><a href="/dashboard">Publisher</a></p>
  ${
    session
      ? html`<details class="menu" data-menu>
  <summary>Menu</summary>
  <div class="menu-body">
  <nav aria-label="Dashboard">
    <ul>${SECTIONS.filter((s) => session.sections?.includes(s.id) ?? true).map((s) => html`<li><a href="${s.href}"${s.id === session.active ? html` aria-current="page"` : ''}>${s.label}</a></li>`)}</ul>
  </nav>
  ${personPart(session)}
  <form method="post" action="/dashboard/sign-out" class="sign-out">
    <input type="hidden" name="csrf" value="${session.csrf}">
    <span class="ws" title="Workspace ${session.workspaceId}"><span class="vh">Workspace: </span>${session.workspaceName ?? session.workspaceId}</span>
    <button type="submit" class="link">Sign out</button>
  </form>
  </div>
</details>`
      : ''
  }
</header>
<main id="main" tabindex="-1">
${options.flash ? html`<p class="notice" role="status">${options.flash}</p>` : ''}
${options.body}
</main>
</body>
</html>`;
}

/** A labelled form field with its hint and error, wired with aria-describedby so readers announce both. */
export function field(options: { id: string; label: string; control: SafeHtml; hint?: Renderable; error?: string | undefined }): SafeHtml {
  const { id, label, control, hint, error } = options;
  return html`<div class="field${error ? ' invalid' : ''}">
  <label for="${id}">${label}</label>
  ${hint ? html`<p class="hint" id="${id}-hint">${hint}</p>` : ''}
  ${control}
  ${error ? html`<p class="field-error" id="${id}-error">${error}</p>` : ''}
</div>`;
}

/** The `aria-describedby` / `aria-invalid` attributes matching `field`'s hint and error. */
export function describedBy(id: string, options: { hint?: boolean; error?: string | undefined }): SafeHtml {
  const ids = [options.hint ? `${id}-hint` : null, options.error ? `${id}-error` : null].filter((v): v is string => v !== null);
  return html`${ids.length > 0 ? html` aria-describedby="${ids.join(' ')}"` : ''}${options.error ? html` aria-invalid="true"` : ''}`;
}

/** A hidden CSRF field; every form posts one. */
export function csrfField(csrf: string): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${csrf}">`;
}

/** A one-button form (revoke, delete, redeliver…), with an optional confirmation question. */
export function actionButton(options: { action: string; csrf: string; label: string; confirm?: string; danger?: boolean; fields?: Record<string, string>; describe?: string }): SafeHtml {
  return html`<form method="post" action="${options.action}" class="inline"${options.confirm ? html` data-confirm="${options.confirm}"` : ''}>
  ${csrfField(options.csrf)}
  ${Object.entries(options.fields ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
  <button type="submit"${options.danger ? html` class="danger"` : ''}${options.describe ? html` aria-label="${options.describe}"` : ''}>${options.label}</button>
</form>`;
}

/** A banner for a failed action, announced to screen readers. */
export function errorBanner(message: string | null | undefined, details?: Renderable, options: { focus?: boolean } = {}): SafeHtml {
  // With `focus`, the page's script moves focus to the banner on load (data-focus-on-load), so a keyboard or
  // screen-reader user lands on what went wrong rather than at the top of the page.
  const focus = options.focus ? html` tabindex="-1" data-focus-on-load` : '';
  return message ? html`<div class="error-banner" role="alert"${focus}><p>${message}</p>${details ?? ''}</div>` : html``;
}

/** A secret shown once, with a copy button (the button works when scripts run). */
export function secretOnce(options: { id: string; label: string; value: string; note?: string }): SafeHtml {
  return html`<div class="secret" role="region" aria-labelledby="${options.id}-label">
  <p id="${options.id}-label"><strong>${options.label}</strong> — ${options.note ?? 'shown once: copy it now, it cannot be shown again.'}</p>
  <div class="secret-row">
    <input id="${options.id}" type="text" readonly value="${options.value}" aria-labelledby="${options.id}-label" spellcheck="false">
    <button type="button" data-copy="${options.id}">Copy</button>
  </div>
</div>`;
}

/**
 * Each cell of a row gets its column's name in `data-label`: under ~600 px a row becomes a card whose cells show
 * their column's name (app.css), so no column (the row's action included) is off-screen. Every `<td`/`<th` in a
 * row is ours: text from people is escaped before it gets here.
 */
function labelCells(rows: readonly SafeHtml[], head: readonly string[]): SafeHtml[] {
  return rows.map((row) => {
    let column = 0;
    return new SafeHtml(
      row.text.replace(/<tr\b|<(td|th)(?=[\s>])/g, (match: string, cell: string | undefined) => {
        if (cell === undefined) {
          column = 0;
          return match;
        }
        const label = head[column++];
        return label ? `${match} data-label="${escapeHtml(label)}"` : match;
      }),
    );
  });
}

/** A table that reads as stacked cards on a phone; the region is focusable so keyboards can scroll it when wider. */
export function table(options: { caption: string; head: readonly string[]; rows: readonly SafeHtml[]; empty: string; id?: string; attrs?: SafeHtml }): SafeHtml {
  if (options.rows.length === 0) return html`<p class="empty"${options.id ? html` id="${options.id}"` : ''}>${options.empty}</p>`;
  return html`<div class="table-wrap" role="region" aria-label="${options.caption}" tabindex="0"${options.id ? html` id="${options.id}"` : ''}${options.attrs ?? ''}>
<table class="cards">
<caption>${options.caption}</caption>
<thead><tr>${options.head.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
<tbody>${labelCells(options.rows, options.head)}</tbody>
</table>
</div>`;
}

export function isoDate(iso: string | null | undefined): SafeHtml {
  if (!iso) return html`—`;
  const readable = iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');
  return html`<time datetime="${iso}">${readable}</time>`;
}

export function badge(status: string): SafeHtml {
  return html`<span class="badge badge-${status}">${status}</span>`;
}

export function number(n: number): string {
  return n.toLocaleString('en-US');
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}
