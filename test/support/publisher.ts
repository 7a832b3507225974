import { createPublisher, type PublisherDeps, type PublisherSettings } from '../../src/workers/publisher.js';
import type { TestServer } from './server.js';

/**
 * A publisher on the test server's database, clock and metrics, with the given network adapters (usually the
 * server's own, wrapped to watch or slow their calls), for tests that drive the worker themselves.
 */
export function testPublisher(s: TestServer, adapterFor: PublisherDeps['adapterFor'], settings: Partial<PublisherSettings> = {}) {
  const c = s.container;
  return createPublisher({
    db: c.db.kysely,
    dialect: c.db.dialect,
    clock: c.clock,
    logger: c.logger,
    adapterFor,
    checkUnknownSizeMedia: () => Promise.resolve({ ok: true }),
    credentialsFor: () => Promise.resolve(null),
    publicMediaUrl: () => '',
    refundJob: (tx, jobId, workspaceId) => c.services.wallet.refundJob(tx, jobId, workspaceId),
    onFinal: (platform, status, code) => c.metrics.jobFinished(platform, status, code),
    settings: { ...c.config.publisher, ...settings },
  });
}
