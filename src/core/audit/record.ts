import type { Kysely } from 'kysely';
import { insertAuditEvent } from '../../../db/repositories/audit.repo.js';
import type { Database } from '../../../db/schema.js';
import { followingTimeOrderedId, newTimeOrderedId } from '../ids.js';
import type { Principal } from '../principal.js';

/** What a change was done to. */
export interface AuditTarget {
  type: string;
  id: string;
  /** A readable name copied now (a brand's name, a member's email), so the entry reads after a deletion. */
  label?: string | null;
}

/** Who acted when no credential did: the scheduler, the CLI, a sweep. */
export type SystemActor = { kind: 'system'; workspaceId: string; label: string; via?: 'cli' | 'system' };

/**
 * Records one change in the audit log, inside the caller's transaction (`tx`), so a change and its entry commit or
 * roll back together. `action` is `resource.verb` (`content.approved`, `api_key.revoked`,
 * `member.role_changed`); `details` says what changed and never holds a secret.
 */
export async function recordAudit(
  tx: Kysely<Database>,
  actor: Principal | SystemActor,
  action: string,
  target: AuditTarget | null,
  occurredAt: number,
  details: Record<string, unknown> | null = null,
): Promise<void> {
  const origin = actor.kind === 'system' ? undefined : actor.origin;
  await insertAuditEvent(tx, {
    id: nextAuditId(occurredAt),
    workspaceId: actor.workspaceId,
    occurredAt,
    action,
    ...actorColumns(actor),
    via: actor.kind === 'system' ? (actor.via ?? 'system') : (origin?.via ?? 'rest'),
    targetType: target?.type ?? null,
    targetId: target?.id ?? null,
    targetLabel: target?.label ?? null,
    details,
    ip: origin?.ip ?? null,
    userAgent: origin?.userAgent?.slice(0, 300) ?? null,
    requestId: origin?.requestId ?? null,
  });
}

const AUDIT_ID_PREFIX = 'aud_';
let lastAuditId = '';

/**
 * The log reads in (occurred_at, id) order. Entries of one change share their millisecond (a content created and
 * submitted for approval in one transaction), and random tails would list them in any order; so an id made in the
 * same millisecond as this process's previous one follows it. A transaction runs in one process, which is where
 * the order matters.
 */
function nextAuditId(occurredAt: number): string {
  const fresh = newTimeOrderedId(AUDIT_ID_PREFIX, occurredAt);
  const sameTime = fresh.slice(0, AUDIT_ID_PREFIX.length + 10) === lastAuditId.slice(0, AUDIT_ID_PREFIX.length + 10);
  const id = sameTime && fresh <= lastAuditId ? (followingTimeOrderedId(lastAuditId, AUDIT_ID_PREFIX) ?? fresh) : fresh;
  lastAuditId = id;
  return id;
}

function actorColumns(actor: Principal | SystemActor): { actorType: string; actorId: string | null; actorLabel: string | null; actorRole: string | null } {
  switch (actor.kind) {
    case 'system':
      return { actorType: 'system', actorId: null, actorLabel: actor.label, actorRole: null };
    case 'api_key':
      return { actorType: 'api_key', actorId: actor.keyId, actorLabel: null, actorRole: actor.role };
    case 'oauth':
      return { actorType: 'oauth', actorId: actor.clientId, actorLabel: null, actorRole: actor.role };
    case 'user':
      return { actorType: 'user', actorId: actor.userId, actorLabel: null, actorRole: actor.role };
  }
}
