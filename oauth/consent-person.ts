import type { Request, Response } from 'express';
import { defaultPersonRole, GRANT_ROLE_LABELS, type GrantAccessService, grantableRoles } from '../src/core/connected-apps/grant-access.js';
import { CONSENT_SESSION_COOKIE } from '../src/core/oauth-clients/oauth-clients.service.js';
import { type Role, ROLES } from '../src/core/permissions/roles.js';
import type { Origin, Principal } from '../src/core/principal.js';
import type { SessionsService } from '../src/core/sessions/sessions.service.js';
import { locals } from '../src/web/request-context.js';
import type { PersonView } from './consent-page.js';

/** The consent page's side of a signed-in person: their session, what the form posted, what the page offers. */

export type PersonPrincipal = Extract<Principal, { kind: 'user' }>;

/** What the form posted, kept when the page is shown again with an error. */
export interface PostedChoice {
  workspace: unknown;
  role: Role | undefined;
  brandIds: string[];
}

/** Reads one cookie of the request (RFC 6265 `name=value; …`). */
function cookieOf(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq >= 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** A role named by a form, or undefined for "the default" (empty or absent); null for a name that is no role. */
export function postedRole(value: unknown): Role | undefined | null {
  if (value === undefined || value === '') return undefined;
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value) ? (value as Role) : null;
}

/** The values of a repeated form field (checkboxes). */
export function postedList(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string' && v !== '');
  return typeof value === 'string' && value !== '' ? [value] : [];
}

/** Where an approval came from, for the audit log: a person's web page, which the audit names `dashboard`. */
export function originOf(req: Request, res: Response): Origin {
  return { ip: req.ip ?? null, userAgent: req.get('user-agent') ?? null, requestId: locals(res).requestId ?? null, via: 'dashboard' };
}

/** The person whose session the consent page was handed (CONSENT_SESSION_COOKIE), if it is still active. */
export async function personOf(req: Request, sessions: Pick<SessionsService, 'resolve'>): Promise<PersonPrincipal | undefined> {
  const token = cookieOf(req, CONSENT_SESSION_COOKIE) ?? '';
  if (token === '') return undefined;
  const session = await sessions.resolve(token);
  return session.state === 'active' && session.principal.kind === 'user' ? session.principal : undefined;
}

/**
 * What the person may grant in the workspace they chose (`wanted`, else their session's, else their first): the
 * roles up to theirs there, contributor preselected when they may grant it, and their brands.
 */
export async function personViewOf(grantAccess: Pick<GrantAccessService, 'personChoices'>, person: PersonPrincipal, wanted: unknown, posted?: PostedChoice): Promise<PersonView | undefined> {
  const choices = await grantAccess.personChoices(person.userId);
  if (!choices || choices.workspaces.length === 0) return undefined;
  const chosen = choices.workspaces.find((w) => w.workspaceId === wanted) ?? choices.workspaces.find((w) => w.workspaceId === person.workspaceId) ?? choices.workspaces[0]!;
  const offered = grantableRoles(chosen.role);
  const selectedRole = posted?.role !== undefined && offered.includes(posted.role) ? posted.role : defaultPersonRole(chosen.role);
  return {
    email: choices.email,
    workspaces: choices.workspaces.map((w) => ({ id: w.workspaceId, name: w.workspaceName, selected: w === chosen })),
    workspaceId: chosen.workspaceId,
    workspaceName: chosen.workspaceName,
    role: chosen.role,
    roles: offered.map((r) => ({ value: r, label: `${GRANT_ROLE_LABELS[r]} (${r})`, selected: r === selectedRole })),
    brands: chosen.brands.map((b) => ({ id: b.id, name: b.name, checked: posted?.brandIds.includes(b.id) ?? false })),
  };
}
