import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { Principal } from '../../src/core/principal.js';
import { DashboardClient } from '../support/dashboard.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';

/** Monday 23 November 2026, 12:00 UTC (07:00 in New York, 02:00 on Tuesday at Kiritimati, UTC+14). */
const clock = new ManualClock(Date.UTC(2026, 10, 23, 12));

async function composeFor(server: TestServer) {
  const { ws, brandId } = await brandWithConnections(server, ['facebook']);
  const principal: Principal = { kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null };
  const client = new DashboardClient(server.url);
  await client.signIn(ws.api_key);
  /** The date and time the Compose form starts with. */
  const prefilled = async () => {
    const page = await client.get('/dashboard/compose');
    return {
      date: /name="publish_date" type="date" value="([^"]*)"/.exec(page.html)?.[1],
      time: /name="publish_time" type="time" value="([^"]*)"/.exec(page.html)?.[1],
      html: page.html,
    };
  };
  const setQueue = (time_zone: string, slots: { days: ('mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun')[]; time: string }[]) =>
    server.container.services.queue.setQueue(principal, ws.workspace_id, brandId, { time_zone, slots });
  return { ws, brandId, principal, client, prefilled, setQueue };
}

describeEachDb(
  'dashboard compose: the suggested date and time',
  (server) => {
    it('without a queue: tomorrow at 09:00 in the brand’s zone (UTC), said in the When hint', async () => {
      const { prefilled } = await composeFor(server());
      const page = await prefilled();
      expect([page.date, page.time]).toEqual(['2026-11-24', '09:00']);
      expect(page.html).toContain('The date and time start at the brand’s next free queue slot, else tomorrow at 09:00.');
      // Publish now stays the choice: the suggestion only fills the inputs Schedule uses.
      expect(page.html).toMatch(/<input type="radio" id="when-now" name="when" value="now" checked/);
    });

    it('a queue without slots: tomorrow is the brand’s tomorrow, read in its zone', async () => {
      const { prefilled, setQueue } = await composeFor(server());
      await setQueue('Pacific/Kiritimati', []);
      expect(await prefilled()).toMatchObject({ date: '2026-11-25', time: '09:00' });
    });

    it('with a queue: its next free slot, skipping one a scheduled post holds', async () => {
      const { ws, brandId, prefilled, setQueue } = await composeFor(server());
      await setQueue('America/New_York', [{ days: ['tue', 'thu'], time: '10:00' }]);
      expect(await prefilled()).toMatchObject({ date: '2026-11-24', time: '10:00' });
      const queued = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, target_platforms: ['facebook'], content_type: 'text', text: 'First in line', queue: true },
      });
      expect(queued.status, queued.text).toBe(201);
      expect(await prefilled()).toMatchObject({ date: '2026-11-26', time: '10:00' });
    });

    it('with several brands, each brand option carries its own suggestion for the script to follow', async () => {
      const { ws, brandId, principal, prefilled, setQueue } = await composeFor(server());
      await setQueue('America/New_York', [{ days: ['wed'], time: '08:30' }]);
      const other = await server().container.services.brands.create(principal, ws.workspace_id, { name: 'Other' });
      const page = await prefilled();
      expect(page.html).toMatch(new RegExp(`<option value="${brandId}" data-zone="America/New_York" data-suggest-date="2026-11-25" data-suggest-time="08:30">`));
      expect(page.html).toMatch(new RegExp(`<option value="${other.id}" data-zone="UTC" data-suggest-date="2026-11-24" data-suggest-time="09:00">`));
      // No brand chosen yet: the inputs start with the first brand's suggestion.
      expect(page.html).toContain('<option value="">Choose…</option>');
      expect(page.date).toMatch(/^2026-11-2[45]$/);
    });
  },
  {},
  () => ({ clock }),
);
