import type { Kysely } from 'kysely';
import { deleteExpiredIdempotencyKeys } from '../../db/repositories/idempotency.repo.js';
import { deleteExpiredModels } from '../../db/repositories/oauth.repo.js';
import { deleteOrphanGrantAccess } from '../../db/repositories/oauth-grant-access.repo.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../observability/logger.js';

/**
 * Periodic sweeps of rows that only expire: idempotency keys past their day, and the authorization server's
 * expired codes, sessions, interactions and tokens (oidc-provider keeps wall-clock time, so those use it too);
 * dashboard sessions past their deadlines; audit entries past their retention (AUDIT_RETENTION); temporary media downloads a killed process left; and live network tokens about to expire (refreshed, or warned about).
 */
export function createMaintenance(deps: { db: Kysely<Database>; clock: Clock; logger: Logger; everyMs: number; sweepConnections(): Promise<void>; sweepSessions(): Promise<number>; sweepFiles(): Promise<number>; sweepAudit(): Promise<number> }) {
  let timer: NodeJS.Timeout | undefined;
  const sweep = async () => {
    try {
      await deleteExpiredIdempotencyKeys(deps.db, deps.clock.now());
      // OAuth rows expire on the wall clock: oidc-provider sets their expiry from Date.now, not from our Clock.
      // eslint-disable-next-line no-restricted-properties -- the provider's time, deliberately
      await deleteExpiredModels(deps.db, Date.now());
      // What a grant carried goes once the grant has (revoked, disconnected or expired); an hour's margin spares
      // a row written just before its grant is saved.
      await deleteOrphanGrantAccess(deps.db, deps.clock.now() - 3_600_000);
      await deps.sweepConnections();
      await deps.sweepSessions();
      await deps.sweepFiles();
      await deps.sweepAudit();
    } catch (err) {
      deps.logger.warn({ err }, 'maintenance sweep failed');
    }
  };
  return {
    sweep,
    start(): void {
      timer = setInterval(() => void sweep(), deps.everyMs);
      timer.unref();
    },
    stop(): void {
      if (timer) clearInterval(timer);
    },
  };
}
