import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { NetworkAdapter } from '../../src/networks/adapter.js';
import { testPublisher } from '../support/publisher.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';

/**
 * Within one run, the publish step starts from the progress its submit saved, as a run taking the job over would.
 * A network that records its upload at submit (TikTok's upload address, Facebook's unpublished photos) otherwise
 * published from the progress read at the claim: it found no upload and waited for the next run to make it.
 */
function recordingPublisher(s: TestServer, seen: unknown[], saveAtSubmit: Record<string, unknown>) {
  const c = s.container;
  const adapterFor = (mode: string, platform: Parameters<typeof c.networks.adapterFor>[1]): NetworkAdapter => {
    const real = c.networks.adapterFor(mode, platform);
    return {
      submit: async (req) => {
        expect(await req.saveProgress(saveAtSubmit)).toBe(true);
        return real.submit(req);
      },
      publish: (req, id) => {
        seen.push(req.progress);
        return real.publish(req, id);
      },
      confirm: (req, id, context) => real.confirm(req, id, context),
    };
  };
  return testPublisher(s, adapterFor);
}

describeEachDb(
  'a run carries its saved progress from submit to publish',
  (server) => {
    it('publish sees what submit saved in the same run, and the job row holds the same', async () => {
      const s = server();
      const { ws, brandId } = await brandWithConnections(s, ['linkedin']);
      const created = await s.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'Progress carried along' },
      });
      expect(created.status).toBe(201);
      const seen: unknown[] = [];
      const upload = { upload_url: 'https://upload.example/abc', chunks_sent: 0 };
      await recordingPublisher(s, seen, upload).drain();
      expect(seen).toEqual([upload]);
      const job = await s.container.db.kysely.selectFrom('jobs').select(['status', 'network_state']).where('content_id', '=', created.body.content_id as string).executeTakeFirstOrThrow();
      expect(job.status).toBe('confirming');
      expect(JSON.parse(job.network_state ?? 'null')).toEqual(upload);
    });
  },
  {},
  () => ({ clock: new ManualClock(Date.now()), workers: false }),
);
