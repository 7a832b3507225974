import type { Kysely } from 'kysely';
import { insertAuditEvent } from '../../../db/repositories/audit.repo.js';
import type { Database } from '../../../db/schema.js';
import { newTimeOrderedId } from '../ids.js';
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
    id: newTimeOrderedId('aud_', occurredAt),
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
