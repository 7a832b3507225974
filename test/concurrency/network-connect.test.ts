import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeMastodon, type FakeMastodon } from '../fakes/mastodon.js';
import { describeCluster, statuses } from './support.js';

/**
 * A per-server network's first connections racing across processes: each process may register this service on the
 * user's server, but the database keeps one registration (a unique key), and every flow started, in whichever
 * process, uses that one client, so the user's approval always comes back to a client we hold the secret of.
 */
let mastodon: FakeMastodon;

beforeAll(async () => {
  mastodon = await startFakeMastodon();
});
afterAll(async () => {
  await mastodon.close();
});

describeCluster(
  'concurrent first connections to one Mastodon server',
  (cluster) => {
    it('20 parallel starts across the processes keep one registration, and every authorization URL names its client', async () => {
      const ws = await cluster().workspace();
      const brand = await cluster().doors[0]!.request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Race' } });
      const results = await cluster().split(20, (door) =>
        door.request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands/${brand.body.id as string}/connections/oauth`, {
          key: ws.api_key,
          body: { platform_slug: 'mastodon', instance: mastodon.origin },
        }),
      );
      expect(statuses(results)).toEqual({ 200: 20 });
      const kept = await cluster().server.container.db.kysely.selectFrom('network_instance_apps').select('client_id').where('origin', '=', mastodon.origin).execute();
      expect(kept).toHaveLength(1);
      const clients = new Set(results.map((r) => new URL(r.body.authorization_url as string).searchParams.get('client_id')));
      expect([...clients]).toEqual([kept[0]!.client_id]);
      // Registrations that lost the race exist on the server but are never used.
      expect(mastodon.apps.has(kept[0]!.client_id)).toBe(true);
    });
  },
);
