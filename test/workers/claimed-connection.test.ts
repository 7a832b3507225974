import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { Principal } from '../../src/core/principal.js';
import type { NetworkAdapter } from '../../src/networks/adapter.js';
import { testPublisher } from '../support/publisher.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';

/**
 * A claim reads its jobs' connections in one statement, and a run that starts within a second of its claim uses
 * that reading. A run that waited longer in its connection's queue reads the connection again, so a connection
 * deactivated meanwhile publishes nothing more.
 */
function publisher(s: TestServer, submitTakesMs: number, submitted: string[], duringFirstSubmit: () => Promise<unknown> = () => Promise.resolve()) {
  const c = s.container;
  const clock = c.clock as ManualClock;
  const adapterFor = (mode: string, platform: Parameters<typeof c.networks.adapterFor>[1]): NetworkAdapter => {
    const real = c.networks.adapterFor(mode, platform);
    return {
      submit: async (req) => {
        submitted.push(req.jobId);
        if (submitted.length === 1) await duringFirstSubmit();
        clock.advance(submitTakesMs);
        return real.submit(req);
      },
      publish: (req, id) => real.publish(req, id),
      confirm: (req, id, context) => real.confirm(req, id, context),
    };
  };
  // One run at a time per connection: the second job waits for the first.
  return testPublisher(s, adapterFor, { perConnection: 1 });
}

describeEachDb(
  'a run uses the connection read with its claim only right after it',
  (server) => {
    async function twoJobsOnOneConnection(s: TestServer) {
      const { ws, brandId, connections } = await brandWithConnections(s, ['linkedin']);
      const ids: string[] = [];
      for (const text of ['first', 'second']) {
        const res = await s.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
          key: ws.api_key,
          body: { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text },
        });
        expect(res.status).toBe(201);
        ids.push(res.body.content_id as string);
      }
      const jobs = await s.container.db.kysely.selectFrom('jobs').select(['id', 'content_id']).where('content_id', 'in', ids).execute();
      const jobOf = (contentId: string) => jobs.find((j) => j.content_id === contentId)!.id;
      return { ws, connectionId: connections.linkedin!, first: jobOf(ids[0]!), second: jobOf(ids[1]!) };
    }

    const statusOf = async (s: TestServer, jobId: string) =>
      s.container.db.kysely.selectFrom('jobs').select(['status', 'error_code']).where('id', '=', jobId).executeTakeFirstOrThrow();

    it('a job that waited more than a second after its claim sees its connection deactivated meanwhile, and publishes nothing', async () => {
      const s = server();
      const { ws, connectionId, first, second } = await twoJobsOnOneConnection(s);
      const submitted: string[] = [];
      // Both jobs are claimed together; the first run takes 2 s, and while it runs the connection is deactivated.
      const principal: Principal = { kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null };
      const worker = publisher(s, 2_000, submitted, () => s.container.services.connections.deactivate(principal, ws.workspace_id, connectionId));
      await worker.drain();
      // Whichever ran first was submitted; the other, claimed with it, waited 2 s and found the connection gone.
      expect(submitted).toHaveLength(1);
      const waited = submitted[0] === first ? second : first;
      expect(await statusOf(s, waited)).toEqual({ status: 'failed', error_code: 'token_expired' });
    });

    it('a job that starts right after its claim publishes with the connection read with it', async () => {
      const s = server();
      const { first, second } = await twoJobsOnOneConnection(s);
      const submitted: string[] = [];
      const worker = publisher(s, 10, submitted);
      await worker.drain();
      expect(submitted.sort()).toEqual([first, second].sort());
      for (const id of [first, second]) expect((await statusOf(s, id)).status).toBe('confirming');
    });
  },
  {},
  () => ({ clock: new ManualClock(Date.now()), workers: false }),
);
