import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertDeliveries } from '../../db/repositories/deliveries.repo.js';
import { testDatabaseKinds } from '../support/databases.js';
import { type ServiceProcess, startServiceProcess } from '../support/process.js';
import { startTestServerOn, TEST_SECRET_KEY, type TestServer } from '../support/server.js';
import { overrides, serviceEnv } from '../support/overrides.js';

/**
 * Several dispatchers on one outbox: two worker processes (`SERVICE_ROLE=worker`) and the in-process dispatcher
 * claim the same due deliveries at once, to two answering endpoints and one that never answers. Every attempt is
 * made by one dispatcher only, recorded once, and the silent endpoint never holds more than its per-endpoint
 * room in any dispatcher.
 */

const PER_ENDPOINT = 4;
const TIMEOUT_MS = 1_500;
const ENV: Record<string, string> = serviceEnv(
  {
    ALLOW_LOCAL_URLS: 'true',
    WEBHOOK_TIMEOUT: `${TIMEOUT_MS}ms`,
    WEBHOOK_PER_ENDPOINT: String(PER_ENDPOINT),
    WEBHOOK_CONCURRENCY: '12',
  },
  overrides({ WORKER_POLL: '10ms', SANDBOX_DELAY: '0ms' }),
);

/**
 * Counts each delivery id, and the most requests an answering path had open at once. (The silent path's are
 * counted from the attempts' own records instead: the receiver learns of an abandoned attempt's closed socket
 * late, after the slot it held has sent again.)
 */
function startCountingReceiver() {
  const seen = new Map<string, number>();
  const answering = new Map<string, number>();
  const answeringPeak = new Map<string, number>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    const id = String(req.headers['service-delivery-id']);
    seen.set(id, (seen.get(id) ?? 0) + 1);
    req.resume();
    if (path === '/silent') return;
    answering.set(path, (answering.get(path) ?? 0) + 1);
    answeringPeak.set(path, Math.max(answeringPeak.get(path) ?? 0, answering.get(path)!));
    // A few milliseconds, so that attempts of the several dispatchers overlap.
    req.on('end', () =>
      setTimeout(() => {
        answering.set(path, answering.get(path)! - 1);
        res.writeHead(204).end();
      }, 3),
    );
  });
  return new Promise<{ url: string; seen: Map<string, number>; answeringPeak(path: string): number; close(): Promise<void> }>((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        seen,
        answeringPeak: (path: string) => answeringPeak.get(path) ?? 0,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      }),
    );
  });
}

for (const kind of testDatabaseKinds()) {
  describe(`three dispatchers in three places on one outbox [${kind.name}]`, () => {
    let server: TestServer;
    let receiver: Awaited<ReturnType<typeof startCountingReceiver>>;
    const workers: ServiceProcess[] = [];

    beforeAll(async () => {
      receiver = await startCountingReceiver();
      const database = await kind.create();
      server = await startTestServerOn(database, ENV, { workers: false });
    });
    afterAll(async () => {
      const codes = await Promise.all(workers.map((w) => w.stop()));
      await server?.container.dispatcher.stop();
      await server?.stop();
      await receiver?.close();
      // Each worker finishes its attempts in hand and exits cleanly on SIGTERM.
      expect(codes).toEqual(workers.map(() => 0));
    });

    it('600 deliveries to two answering endpoints beside a silent one: each attempt made and recorded exactly once, the silent endpoint within its room', async () => {
      const ws = await server.workspace('Deliveries');
      const hook = async (path: string) => {
        const res = await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, {
          key: ws.api_key,
          body: { url: `${receiver.url}${path}`, description: path, enabled_events: ['content.published'] },
        });
        expect(res.status).toBe(201);
        return res.body.id as string;
      };
      const [a, b, silent] = [await hook('/a'), await hook('/b'), await hook('/silent')];
      const db = server.container.db.kysely;
      const now = Date.now();
      const rows = [a, b, silent].flatMap((webhookId, e) =>
        Array.from({ length: webhookId === silent ? 100 : 300 }, (_, i) => ({
          id: `del_${e}x${String(i).padStart(4, '0')}`,
          workspaceId: ws.workspace_id,
          webhookId,
          eventId: `evt_${e}x${i}`,
          eventType: 'content.published',
          body: JSON.stringify({ id: `evt_${e}x${i}`, type: 'content.published', data: {} }),
          now,
        })),
      );
      await insertDeliveries(db, rows);

      // Two worker processes and the in-process dispatcher all start on the same due outbox.
      const env = { ...ENV, DATABASE_URL: server.database.url, SECRET_KEY: TEST_SECRET_KEY, SERVICE_ROLE: 'worker', LOG_LEVEL: 'warn' };
      workers.push(...(await Promise.all([startServiceProcess(env), startServiceProcess(env)])));
      server.container.dispatcher.start();

      let leasedSilentPeak = 0;
      const deadline = Date.now() + 60_000;
      for (;;) {
        const leased = await db.selectFrom('deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('webhook_id', '=', silent).where('locked_by', 'is not', null).executeTakeFirstOrThrow();
        leasedSilentPeak = Math.max(leasedSilentPeak, Number(leased.n));
        const done = await db
          .selectFrom('deliveries')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('webhook_id', 'in', [a, b])
          .where('status', '=', 'delivered')
          .executeTakeFirstOrThrow();
        if (Number(done.n) === 600 || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      await server.container.dispatcher.stop();
      await Promise.all(workers.map((w) => w.stop()));

      const answered = rows.filter((r) => r.webhookId !== silent).map((r) => r.id);
      // Every answered delivery reached its receiver exactly once.
      expect(answered.filter((id) => receiver.seen.get(id) !== 1)).toEqual([]);
      // Each delivery of the silent endpoint was tried at most once (its retry is a minute away).
      expect([...receiver.seen].filter(([id, n]) => id.startsWith('del_2x') && n > 1)).toEqual([]);
      const attempts = await db.selectFrom('delivery_attempts').select(['delivery_id', 'number']).execute();
      const perDelivery = new Map<string, number[]>();
      for (const at of attempts) perDelivery.set(at.delivery_id, [...(perDelivery.get(at.delivery_id) ?? []), Number(at.number)]);
      // One attempt record per attempt made, numbered 1, for every delivery (none written twice, none lost).
      expect(answered.filter((id) => JSON.stringify(perDelivery.get(id)) !== '[1]')).toEqual([]);
      const silentTried = [...receiver.seen.keys()].filter((id) => id.startsWith('del_2x'));
      expect(silentTried.length).toBeGreaterThan(0);
      expect(silentTried.filter((id) => JSON.stringify(perDelivery.get(id)) !== '[1]')).toEqual([]);
      const states = await db.selectFrom('deliveries').select(['id', 'status', 'attempt_count']).where('webhook_id', 'in', [a, b]).execute();
      expect(states.filter((s) => s.status !== 'delivered' || Number(s.attempt_count) !== 1)).toEqual([]);
      // The silent endpoint holds at most its room in each of the three dispatchers, never its whole backlog: its
      // attempts' own records (start and duration) never overlap more than 3 × room deep.
      const silentAttempts = await db
        .selectFrom('delivery_attempts')
        .innerJoin('deliveries', 'deliveries.id', 'delivery_attempts.delivery_id')
        .select(['delivery_attempts.at', 'delivery_attempts.latency_ms'])
        .where('deliveries.webhook_id', '=', silent)
        .execute();
      const edges = silentAttempts.flatMap((x) => [
        { t: Number(x.at), d: 1 },
        { t: Number(x.at) + Number(x.latency_ms), d: -1 },
      ]);
      edges.sort((p, q) => p.t - q.t || p.d - q.d);
      let depth = 0;
      let deepest = 0;
      for (const e of edges) deepest = Math.max(deepest, (depth += e.d));
      expect(deepest).toBeLessThanOrEqual(3 * PER_ENDPOINT);
      expect(deepest).toBeGreaterThanOrEqual(PER_ENDPOINT);
      expect(leasedSilentPeak).toBeLessThanOrEqual(3 * PER_ENDPOINT);
      // The dispatchers really raced: one endpoint had more requests open at once than one dispatcher may send it.
      expect(Math.max(receiver.answeringPeak('/a'), receiver.answeringPeak('/b'))).toBeGreaterThan(PER_ENDPOINT);
      expect(Math.max(receiver.answeringPeak('/a'), receiver.answeringPeak('/b'))).toBeLessThanOrEqual(3 * PER_ENDPOINT);
    }, 90_000);
  });
}
