import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type Permission, PERMISSIONS, ROLE_PERMISSIONS, ROLES, WORKSPACE_WIDE } from '../src/core/permissions/roles.js';

const README = fileURLToPath(new URL('../README.md', import.meta.url));

/** What each permission lets one do, in the README's words; one row each, in the code's order. */
const LABELS: Record<Permission, string> = {
  'workspace.read': 'Workspace: read its name and plan (`/me`)',
  'brands.read': 'Brands: read, with their queues',
  'brands.manage': 'Brands: create, rename, delete, set the queue',
  'connections.read': 'Connections: read, list publish targets',
  'connections.manage': 'Connections: connect, reconnect, choose target, deactivate',
  'contents.read': 'Contents: read, list, calendar',
  'contents.draft': 'Contents: create and edit drafts, preview',
  'contents.publish': 'Contents: schedule, publish now, cancel, retry, edit what is scheduled',
  'contents.approve': 'Contents: approve or request changes',
  'contents.comment': 'Contents: comment',
  'media.read': 'Media: read the library',
  'media.upload': 'Media: upload, import from an address',
  'media.delete': 'Media: delete',
  'webhooks.read': 'Webhooks: read endpoints and deliveries',
  'webhooks.manage': 'Webhooks: create, edit, delete, test, redeliver',
  'api_keys.manage': 'API keys: create (never above one\'s own role), list, revoke',
  'oauth_clients.manage': 'OAuth clients and connected apps: manage',
  'wallet.read': 'Wallet and plan: balance, prices, usage',
  'wallet.pay': 'Wallet: buy credits (offers)',
  'members.read': 'Members: read',
  'members.manage': 'Members and invitations: invite, change role, remove',
  'members.manage_owners': 'Members: make, demote or remove an owner',
  'audit.read': 'Audit log: read',
};

/** The table the README must hold, rendered from `ROLE_PERMISSIONS`. */
function matrixFromCode(): string {
  const head = `| Permission | ${ROLES.map((r) => `\`${r}\``).join(' | ')} | Brand-limited |`;
  const rule = `| --- | ${ROLES.map(() => ':-:').join(' | ')} | --- |`;
  const rows = PERMISSIONS.map(
    (p) => `| ${LABELS[p]} (\`${p}\`) | ${ROLES.map((r) => (ROLE_PERMISSIONS[r].has(p) ? '✓' : '—')).join(' | ')} | ${WORKSPACE_WIDE.has(p) ? 'never' : 'on its brands'} |`,
  );
  return [head, rule, ...rows].join('\n');
}

/** The table under the README's "Roles and what they may do". */
function matrixInReadme(): string {
  const text = readFileSync(README, 'utf8');
  const start = text.indexOf('\n### Roles and what they may do\n');
  expect(start, 'README has no role matrix').toBeGreaterThan(0);
  const lines = text.slice(start + 1).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const table: string[] = [];
  for (const line of lines.slice(first)) {
    if (!line.startsWith('|')) break;
    table.push(line);
  }
  return table.join('\n');
}

describe('README: the role matrix is the one in code', () => {
  it('lists every permission for every role exactly as ROLE_PERMISSIONS grants it', () => {
    // On a failure, the expected side is the table to paste into the README.
    if (process.env.PRINT_ROLE_MATRIX) console.log(matrixFromCode());
    expect(matrixInReadme()).toBe(matrixFromCode());
  });
});
