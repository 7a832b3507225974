import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { Content } from '../../src/core/contents/contents.schema.js';
import type { Principal } from '../../src/core/principal.js';
import { DashboardClient, formAsSent, textOf } from '../support/dashboard.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';

/** Monday 23 November 2026, 12:00 UTC (07:00 in New York). */
const NOW = Date.UTC(2026, 10, 23, 12);

async function scheduler(server: TestServer, zone?: string) {
  const { ws, brandId } = await brandWithConnections(server, ['facebook', 'linkedin']);
  const principal: Principal = { kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null };
  const { services } = server.container;
  if (zone) await services.queue.setQueue(principal, ws.workspace_id, brandId, { time_zone: zone, slots: [{ days: ['tue', 'thu'], time: '10:00' }] });
  const client = new DashboardClient(server.url);
  await client.signIn(ws.api_key);

  /** Opens Compose and sends its form with these fields (and the page's idempotency key). */
  const compose = async (fields: Record<string, string | string[]>) => {
    const page = await client.get('/dashboard/compose');
    const key = /name="idempotency_key" value="([^"]+)"/.exec(page.html)![1]!;
    return client.post('/dashboard/compose', { idempotency_key: key, brand_id: brandId, target_platforms: ['facebook', 'linkedin'], content_type: 'text', ...fields });
  };
  const get = (id: string) => services.contents.get(principal, ws.workspace_id, id);
  const all = async () => (await services.contents.list(principal, ws.workspace_id, { limit: 100 })).data;
  const create = async (input: Record<string, unknown>) => {
    const res = await server.request<Content>('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
      key: ws.api_key,
      body: { brand_id: brandId, target_platforms: ['facebook'], content_type: 'text', ...input },
    });
    expect(res.status, res.text).toBe(201);
    return res.body;
  };
  return { ws, brandId, principal, client, compose, get, all, create };
}

const idOf = (url: string) => /\/dashboard\/contents\/([0-9a-f-]{36})$/.exec(url)?.[1];

/** The text of the element with this id. */
function byId(html: string, id: string): string {
  const match = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</(p|strong|section|ol|div)>`).exec(html);
  return match ? textOf(match[1]!) : '';
}

/** The text of one calendar day: its heading and its posts. */
function dayText(html: string, date: string): string {
  const match = new RegExp(`<li class="day[^"]*"[^>]*>\\s*<h3 id="day-${date}">[\\s\\S]*?</li>(?=\\s*(<li class="day|</ol>))`).exec(html);
  return match ? textOf(match[0]) : '';
}

/** The form of a page whose action is `action`, for posting it again with its own hidden fields. */
function hiddenFields(html: string, action: string): Record<string, string> {
  const form = new RegExp(`<form method="post" action="${action.replace(/[/.]/g, '\\$&')}"[^>]*>([\\s\\S]*?)</form>`).exec(html);
  expect(form, `form ${action}`).not.toBeNull();
  const fields: Record<string, string> = {};
  for (const m of form![1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) if (m[1] !== 'csrf') fields[m[1]!] = m[2]!;
  return fields;
}

describeEachDb(
  'dashboard scheduling',
  (server) => {
    it('navigation has Calendar and Drafts; Compose offers the four When choices, the date and time in the brand’s zone', async () => {
      const { client, brandId } = await scheduler(server(), 'America/New_York');
      const page = await client.get('/dashboard/compose');
      expect(page.html).toContain('<a href="/dashboard/calendar">Calendar</a>');
      expect(page.html).toContain('<a href="/dashboard/drafts">Drafts</a>');
      expect(page.html).toContain('<legend>When</legend>');
      for (const [value, label] of [['now', 'Publish now'], ['schedule', 'Schedule'], ['queue', 'Add to queue'], ['draft', 'Save draft']]) {
        expect(page.html).toMatch(new RegExp(`<input type="radio" id="when-${value}" name="when" value="${value}"[^>]*>\\s*<label for="when-${value}">${label}</label>`));
      }
      expect(page.html).toMatch(/<input type="radio" id="when-now" name="when" value="now" checked/);
      expect(page.html).toMatch(/<label for="publish-date">Date<\/label>\s*<input id="publish-date" name="publish_date" type="date"/);
      expect(page.html).toMatch(/<label for="publish-time">Time<\/label>\s*<input id="publish-time" name="publish_time" type="time"/);
      // One brand, so it is chosen: its zone is named next to the inputs, and each option carries its zone.
      expect(byId(page.html, 'publish-zone')).toContain('America/New_York');
      expect(page.html).toMatch(new RegExp(`<option value="${brandId}" data-zone="America/New_York"[^>]* selected>`));
      expect(page.html).toMatch(/<button type="submit" class="primary">Publish<\/button>/);
    });

    it('schedules at a local date and time read in the brand’s zone, and the content page offers edit, publish now and cancel', async () => {
      const { compose, get } = await scheduler(server(), 'America/New_York');
      const page = await compose({ text: 'Tomorrow at nine', when: 'schedule', publish_date: '2026-11-24', publish_time: '09:00' });
      expect(page.status, textOf(page.html).slice(0, 400)).toBe(200);
      const id = idOf(page.url)!;
      expect(id).toBeDefined();
      expect(textOf(page.html)).toContain('Scheduled for 2026-11-24 09:00 (America/New_York) on 2 networks.');
      const stored = await get(id);
      expect(stored).toMatchObject({ status: 'scheduled', publish_at: '2026-11-24T14:00:00.000Z', time_zone: 'America/New_York', local_publish_at: '2026-11-24T09:00', queued: false });
      expect(stored.jobs.map((j) => j.status)).toEqual(['scheduled', 'scheduled']);
      // The page shows when, offers the edit form pre-filled, and does not refresh itself while the post waits.
      const text = textOf(page.html);
      expect(text).toContain('What will be published');
      expect(text).toMatch(/Publishes 2026-11-24 09:00 \(America\/New_York\), 2026-11-24 14:00:00(\.000)? UTC/);
      expect(page.html).toContain('<span class="badge badge-scheduled">scheduled</span>');
      expect(page.html).toContain('Waits for its time');
      expect(page.html).not.toContain('data-refresh-while');
      expect(page.html).toMatch(/<h2 id="edit-h">Edit, reschedule or cancel<\/h2>/);
      expect(page.html).toMatch(/<input type="radio" id="when-schedule" name="when" value="schedule" checked/);
      expect(page.html).toContain('name="publish_date" type="date" value="2026-11-24"');
      expect(page.html).toContain('name="publish_time" type="time" value="09:00"');
      expect(page.html).toMatch(/<form method="post" action="\/dashboard\/contents\/[0-9a-f-]+\/publish" class="inline" data-confirm=/);
      expect(page.html).toMatch(/<form method="post" action="\/dashboard\/contents\/[0-9a-f-]+\/cancel" class="inline" data-confirm=/);
    });

    it('refuses Schedule without a date, or a time in the past, next to the When choice, creating nothing', async () => {
      const { compose, all } = await scheduler(server());
      const missing = await compose({ text: 'No date', when: 'schedule', publish_date: '', publish_time: '09:00' });
      expect(missing.status).toBe(400);
      expect(byId(missing.html, 'when-error')).toBe('Choose a date and a time.');
      expect(missing.html).toMatch(/<input type="radio" id="when-schedule" name="when" value="schedule" checked/);
      expect(missing.html).toMatch(/<button type="submit" class="primary">Schedule<\/button>/);
      const past = await compose({ text: 'Too late', when: 'schedule', publish_date: '2026-11-23', publish_time: '11:00' });
      expect(past.status).toBe(400);
      // The brand has no queue, so the time was read in UTC, and the refusal says so in those words.
      expect(byId(past.html, 'when-error')).toContain('must be in the future (it is 23 Nov 2026 11:00 in UTC; now it is 23 Nov 2026 12:00)');
      expect(past.html).toContain('Too late');
      expect(past.html).toContain('value="2026-11-23"');
      expect(await all()).toEqual([]);
    });

    it('Add to queue takes the brand’s next free slot, and is refused in words for a brand without a queue', async () => {
      const without = await scheduler(server());
      const refused = await without.compose({ text: 'Queued', when: 'queue' });
      expect(refused.status).toBe(400);
      expect(byId(refused.html, 'when-error')).toContain("This brand has no queue yet: set its slots on the brand's queue page");
      expect(await without.all()).toEqual([]);

      const { compose, get } = await scheduler(server(), 'Europe/Berlin');
      const page = await compose({ text: 'Queued', when: 'queue' });
      expect(page.status).toBe(200);
      expect(textOf(page.html)).toContain('Added to the queue for 2026-11-24 10:00 (Europe/Berlin) on 2 networks.');
      expect(await get(idOf(page.url)!)).toMatchObject({ status: 'scheduled', queued: true, publish_at: '2026-11-24T09:00:00.000Z' });
      expect(textOf(page.html)).toContain('from the brand’s queue');
    });

    it('Save draft keeps it for later: listed on Drafts, nothing to publish, and published from there', async () => {
      const { client, compose, get } = await scheduler(server());
      const page = await compose({ text: 'Maybe later', when: 'draft' });
      const id = idOf(page.url)!;
      expect(textOf(page.html)).toContain('Saved as a draft: nothing is published until you schedule or publish it.');
      expect(await get(id)).toMatchObject({ status: 'draft', publish_at: null, jobs: [] });
      expect(textOf(page.html)).toContain('Not scheduled (draft)');
      expect(page.html).toMatch(/<input type="radio" id="when-draft" name="when" value="draft" checked/);

      const drafts = await client.get('/dashboard/drafts');
      expect(drafts.status).toBe(200);
      expect(drafts.html).toMatch(/<h1>Drafts<\/h1>/);
      expect(drafts.html).toContain('<a href="/dashboard/drafts" aria-current="page">Drafts</a>');
      const table = byId(drafts.html, 'drafts');
      expect(table).toContain('Maybe later');
      expect(table).toContain('Facebook');
      expect(drafts.html).toContain(`href="/dashboard/contents/${id}"`);

      const published = await client.post(`/dashboard/contents/${id}/publish`, hiddenFields(drafts.html, `/dashboard/contents/${id}/publish`));
      expect(published.url).toMatch(new RegExp(`/dashboard/contents/${id}$`));
      expect(textOf(published.html)).toContain('Publishing now on 2 networks.');
      expect((await get(id)).status).toBe('publishing');
      const after = await client.get('/dashboard/drafts');
      expect(after.html).not.toContain(`/dashboard/contents/${id}"`);
      // Publishing again is refused in words: it is no longer waiting.
      const again = await client.post(`/dashboard/contents/${id}/publish`, {});
      expect(again.status).toBe(409);
      expect(textOf(again.html)).toContain('This content can no longer be changed: it is publishing. Nothing was changed.');
    });

    it('cancels a draft from the Drafts list and comes back to it', async () => {
      const { client, create, get } = await scheduler(server());
      const draft = await create({ text: 'Drop me', draft: true });
      const drafts = await client.get('/dashboard/drafts');
      const fields = hiddenFields(drafts.html, `/dashboard/contents/${draft.content_id}/cancel`);
      expect(fields.next).toBe('/dashboard/drafts');
      const page = await client.post(`/dashboard/contents/${draft.content_id}/cancel`, fields);
      expect(page.url).toMatch(/\/dashboard\/drafts$/);
      expect(textOf(page.html)).toContain('Canceled: it will not publish.');
      expect(page.html).not.toContain(`/dashboard/contents/${draft.content_id}"`);
      expect((await get(draft.content_id)).status).toBe('canceled');
      // Elsewhere `next` cannot send the person anywhere but the content.
      const other = await create({ text: 'Elsewhere', draft: true });
      const sent = await client.post(`/dashboard/contents/${other.content_id}/cancel`, { next: 'https://evil.example/' });
      expect(sent.url).toMatch(new RegExp(`/dashboard/contents/${other.content_id}$`));
    });

    it('edits the text and reschedules; a refused change keeps what was typed; cancel ends it', async () => {
      const { client, create, get } = await scheduler(server(), 'America/New_York');
      const created = await create({ text: 'First words', publish_at: '2026-11-24T09:00' });
      const id = created.content_id;
      const page = await client.get(`/dashboard/contents/${id}`);
      const edit = formAsSent(page.html, `/dashboard/contents/${id}/edit`);

      const past = await client.post(`/dashboard/contents/${id}/edit`, { ...edit, text: 'Typed words', when: 'schedule', publish_date: '2026-11-22', publish_time: '09:00' });
      expect(past.status).toBe(400);
      expect(byId(past.html, 'when-error')).toMatch(/must be in the future/);
      expect(past.html).toContain('Typed words');
      expect(past.html).toContain('value="2026-11-22"');
      expect((await get(id)).text).toBe('First words');

      const blank = await client.post(`/dashboard/contents/${id}/edit`, { ...formAsSent(past.html, `/dashboard/contents/${id}/edit`), text: '   ', when: 'schedule', publish_date: '2026-11-24', publish_time: '09:00' });
      expect(blank.status).toBe(400);
      expect(byId(blank.html, 'edit-text-error')).not.toBe('');

      const saved = await client.post(`/dashboard/contents/${id}/edit`, {
        ...formAsSent(blank.html, `/dashboard/contents/${id}/edit`),
        text: 'New words',
        when: 'schedule',
        publish_date: '2026-11-25',
        publish_time: '10:30',
      });
      expect(saved.status).toBe(200);
      expect(textOf(saved.html)).toContain('Changes saved. Scheduled for 2026-11-25 10:30 (America/New_York).');
      expect(await get(id)).toMatchObject({ text: 'New words', status: 'scheduled', publish_at: '2026-11-25T15:30:00.000Z', local_publish_at: '2026-11-25T10:30' });

      // Back to the drafts, then scheduled from the draft again.
      const drafted = await client.post(`/dashboard/contents/${id}/edit`, { ...formAsSent(saved.html, `/dashboard/contents/${id}/edit`), text: 'New words', when: 'draft' });
      expect(textOf(drafted.html)).toContain('Changes saved. It is a draft.');
      expect(await get(id)).toMatchObject({ status: 'draft', publish_at: null });

      const cancel = hiddenFields(drafted.html, `/dashboard/contents/${id}/cancel`);
      const canceled = await client.post(`/dashboard/contents/${id}/cancel`, cancel);
      expect(canceled.url).toMatch(new RegExp(`/dashboard/contents/${id}$`));
      expect(textOf(canceled.html)).toContain('Canceled: it will not publish.');
      expect(canceled.html).toContain('<span class="badge badge-canceled">canceled</span>');
      expect(canceled.html).not.toContain('id="edit-h"');
      expect((await get(id)).status).toBe('canceled');
      // A late edit of a canceled content is refused in words; canceling again is answered the same.
      const late = await client.post(`/dashboard/contents/${id}/edit`, { text: 'Too late', when: 'schedule', publish_date: '2026-11-25', publish_time: '10:30' });
      expect(late.status).toBe(409);
      expect(textOf(late.html)).toContain('This content can no longer be changed: it is canceled.');
      const twice = await client.post(`/dashboard/contents/${id}/cancel`, {});
      expect(textOf(twice.html)).toContain('Canceled: it will not publish.');
    });

    it('moves a scheduled content into the queue and keeps its slot when only the text changes', async () => {
      const { client, create, get } = await scheduler(server(), 'Europe/Berlin');
      const created = await create({ text: 'Fixed time', publish_at: '2026-11-27T18:00' });
      const id = created.content_id;
      let page = await client.get(`/dashboard/contents/${id}`);
      page = await client.post(`/dashboard/contents/${id}/edit`, { ...formAsSent(page.html, `/dashboard/contents/${id}/edit`), text: 'Fixed time', when: 'queue' });
      expect(textOf(page.html)).toContain('Changes saved. In the queue for 2026-11-24 10:00 (Europe/Berlin).');
      expect(await get(id)).toMatchObject({ queued: true, publish_at: '2026-11-24T09:00:00.000Z' });
      expect(page.html).toMatch(/<input type="radio" id="when-queue" name="when" value="queue" checked/);
      page = await client.post(`/dashboard/contents/${id}/edit`, { ...formAsSent(page.html, `/dashboard/contents/${id}/edit`), text: 'Other words', when: 'queue' });
      expect(await get(id)).toMatchObject({ text: 'Other words', queued: true, publish_at: '2026-11-24T09:00:00.000Z' });
    });

    it('calendar week: each post at its local time in its own zone, with its status, linked to its page', async () => {
      const { client, create, get } = await scheduler(server(), 'America/New_York');
      const ny = await create({ text: 'New York nine', publish_at: '2026-11-24T09:00' });
      // 08:00 on Wednesday in Auckland is still Tuesday in UTC: it shows on Wednesday, at 08:00.
      const nz = await create({ text: 'Auckland eight', publish_at: '2026-11-25T08:00', time_zone: 'Pacific/Auckland' });
      const gone = await create({ text: 'Called off', publish_at: '2026-11-26T12:00' });
      const next = await create({ text: 'Next week', publish_at: '2026-12-01T09:00' });
      await create({ text: 'Just a draft', draft: true });
      const canceled = await client.post(`/dashboard/contents/${gone.content_id}/cancel`, {});
      expect(canceled.status).toBe(200);
      expect((await get(gone.content_id)).status).toBe('canceled');

      const page = await client.get('/dashboard/calendar?date=2026-11-24');
      expect(page.status).toBe(200);
      expect(page.html).toContain('<a href="/dashboard/calendar" aria-current="page">Calendar</a>');
      expect(page.html).toMatch(/<h2 id="range-h">Week of Monday 23 November 2026<\/h2>/);
      const day = (date: string) => dayText(page.html, date);
      expect(day('2026-11-24')).toMatch(/^Tuesday 24 November 2026 09:00 New York nine scheduled Acme · Facebook Pages$/);
      expect(day('2026-11-25')).toMatch(/^Wednesday 25 November 2026 08:00 Auckland eight scheduled Acme · Facebook Pages · Pacific\/Auckland$/);
      expect(day('2026-11-26')).toMatch(/12:00 Called off canceled/);
      expect(day('2026-11-23')).toContain('No posts.');
      expect(page.html).toContain(`href="/dashboard/contents/${ny.content_id}"`);
      expect(page.html).toContain(`href="/dashboard/contents/${nz.content_id}"`);
      expect(page.html).toContain('<time datetime="2026-11-24T19:00:00.000Z">08:00</time>');
      expect(page.html).not.toContain('Just a draft');
      expect(page.html).not.toContain(`/dashboard/contents/${next.content_id}"`);
      expect(byId(page.html, 'calendar-count')).toBe('3 posts in this week.');
      // Navigation keeps the view and moves by a week.
      expect(page.html).toContain('href="/dashboard/calendar?view=week&amp;date=2026-11-17">Previous week</a>');
      expect(page.html).toContain('href="/dashboard/calendar?view=week&amp;date=2026-12-01">Next week</a>');
      const following = await client.get('/dashboard/calendar?view=week&date=2026-12-01');
      expect(following.html).toContain(`/dashboard/contents/${next.content_id}"`);
      expect(following.html).not.toContain(`/dashboard/contents/${ny.content_id}"`);
    });

    it('calendar month: the whole month in weeks from Monday, posts on their local day; a bad date is said so', async () => {
      const { client, create } = await scheduler(server(), 'America/New_York');
      await create({ text: 'Late November', publish_at: '2026-11-30T17:45' });
      await create({ text: 'Early December', publish_at: '2026-12-02T08:15' });
      const page = await client.get('/dashboard/calendar?view=month&date=2026-11-10');
      expect(page.status).toBe(200);
      expect(page.html).toMatch(/<h2 id="range-h">November 2026<\/h2>/);
      // November 2026 starts on a Sunday: the grid starts on Monday 26 October and ends on Sunday 6 December.
      expect(page.html).toContain('id="day-2026-10-26"');
      expect(page.html).not.toContain('id="day-2026-10-25"');
      expect(page.html).toContain('id="day-2026-12-06"');
      expect(page.html).not.toContain('id="day-2026-12-07"');
      expect(page.html).toMatch(/<li class="day outside"[^>]*>\s*<h3 id="day-2026-12-02">[\s\S]*?Early December/);
      expect(page.html).toMatch(/<h3 id="day-2026-11-30">[\s\S]*?17:45[\s\S]*?Late November/);
      expect(page.html).toContain('href="/dashboard/calendar?view=month&amp;date=2026-10-01">Previous month</a>');
      expect(page.html).toContain('href="/dashboard/calendar?view=month&amp;date=2026-12-01">Next month</a>');
      expect(page.html).toContain('href="/dashboard/calendar?view=week&amp;date=2026-11-10">Week</a>');

      const bad = await client.get('/dashboard/calendar?date=2026-02-30');
      expect(bad.status).toBe(400);
      expect(textOf(bad.html)).toContain('“2026-02-30” is not a date (YYYY-MM-DD): showing the week of today instead.');
    });

    it('calendar: a post published at once is placed in its brand’s zone, and "today" is said in each brand’s zone', async () => {
      const { client, create, ws, principal } = await scheduler(server(), 'America/New_York');
      const oslo = await brandWithConnections(server(), ['facebook'], ws);
      await server().container.services.queue.setQueue(principal, ws.workspace_id, oslo.brandId, { time_zone: 'Europe/Oslo', slots: [] });
      const clock = server().container.clock as ManualClock;
      // Saturday 28 November 2026, 01:50 UTC: Friday 20:50 in New York, Saturday 02:50 in Oslo.
      clock.set(Date.UTC(2026, 10, 28, 1, 50));
      try {
        await client.signIn(ws.api_key);
        const now = await create({ text: 'Friday night special' });
        expect(now.publish_at).toBe('2026-11-28T01:50:00.000Z');
        const page = await client.get('/dashboard/calendar');
        expect(dayText(page.html, '2026-11-27')).toMatch(/20:50 Friday night special/);
        expect(dayText(page.html, '2026-11-28')).not.toContain('Friday night special');
        expect(textOf(page.html)).toContain('today is Friday 27 November 2026 in America/New_York and Saturday 28 November 2026 in Europe/Oslo.');
        expect(page.html).toMatch(/<li class="day today" aria-current="date">\s*<h3 id="day-2026-11-27">/);
        expect(page.html).toMatch(/<li class="day today">\s*<h3 id="day-2026-11-28">/);
      } finally {
        clock.set(NOW);
      }
    });

    it('times on the content page, the contents list and the overview are in the brand’s zone; a canceled post keeps its networks', async () => {
      const { client, create } = await scheduler(server(), 'America/New_York');
      const post = await create({ text: 'Called off later', publish_at: '2026-11-24T09:00' });
      await client.get(`/dashboard/contents/${post.content_id}`);
      const canceled = await client.post(`/dashboard/contents/${post.content_id}/cancel`, {});
      const text = textOf(canceled.html);
      // Created at 12:00 UTC, 07:00 in New York.
      expect(text).toContain('created 2026-11-23 07:00 America/New_York');
      expect(text).toContain('Canceled before publishing: it was for Facebook Pages. Nothing was published.');
      expect(text).not.toContain('No networks.');
      const list = textOf((await client.get('/dashboard/contents')).html);
      expect(list).toContain('2026-11-23 07:00 America/New_York');
      const overview = textOf((await client.get('/dashboard')).html);
      expect(overview).toContain('Created 2026-11-23 07:00 America/New_York · Facebook Pages');
      expect(overview).not.toMatch(/UTC ·\s*$|UTC · (Recent|Calendar|All)/);
    });

    it('calendar opens on the week of the service’s clock, in the brands’ zone', async () => {
      const { client, create, ws } = await scheduler(server(), 'America/New_York');
      const clock = server().container.clock as ManualClock;
      // Far from the wall clock, so only the service's clock can pick this week: Monday 8 March 2027, 03:00 UTC,
      // still Sunday 7 March in New York.
      clock.set(Date.UTC(2027, 2, 8, 3));
      try {
        // The session of the earlier sign-in has expired by then.
        await client.signIn(ws.api_key);
        await create({ text: 'That week', publish_at: '2027-03-10T09:00' });
        const page = await client.get('/dashboard/calendar');
        expect(page.html).toMatch(/<h2 id="range-h">Week of Monday 1 March 2027<\/h2>/);
        expect(page.html).toMatch(/<li class="day today" aria-current="date">\s*<h3 id="day-2027-03-07">/);
        const month = await client.get('/dashboard/calendar?view=month');
        expect(month.html).toMatch(/<h2 id="range-h">March 2027<\/h2>/);
        expect(month.html).toContain('That week');
      } finally {
        clock.set(NOW);
      }
    });

    it('queue editor: the brand page links to it; saves a zone and slots, shows the next free slots, and places refusals by slot', async () => {
      const { client, brandId, principal, ws } = await scheduler(server());
      const brands = await client.get('/dashboard/brands');
      expect(brands.html).toContain(`href="/dashboard/brands/${brandId}/queue">Publishing queue and time zone`);
      const page = await client.get(`/dashboard/brands/${brandId}/queue`);
      expect(page.status).toBe(200);
      expect(page.html).toMatch(/<h1>Publishing queue of Acme<\/h1>/);
      // A searchable input over the current IANA names (no legacy ones such as Asia/Calcutta), UTC by default.
      expect(page.html).toMatch(/<input id="queue-zone" name="time_zone" type="text" list="queue-zone-list" required autocomplete="off" spellcheck="false" value="UTC"/);
      expect(page.html).toContain('<option value="America/New_York"></option>');
      expect(page.html).toContain('<option value="Asia/Kolkata"></option>');
      expect(page.html).toContain('<option value="Europe/Kyiv"></option>');
      expect(page.html).not.toContain('Asia/Calcutta');
      expect(page.html).not.toContain('Europe/Kiev');
      expect(page.html).toContain('<input type="hidden" name="rows" value="2">');
      expect(page.html).toContain('No free slot: add slots above.');

      const saved = await client.post(`/dashboard/brands/${brandId}/queue`, {
        rows: '3',
        time_zone: 'America/New_York',
        'slot-0-day': ['mon', 'wed'],
        'slot-0-time': '09:00',
        'slot-1-day': [],
        'slot-1-time': '',
        'slot-2-day': ['fri'],
        'slot-2-time': '17:30',
      });
      expect(saved.url).toMatch(new RegExp(`/dashboard/brands/${brandId}/queue$`));
      expect(textOf(saved.html)).toContain('Queue saved: 3 posting times a week (2 slots on 3 days) in America/New_York.');
      const stored = await server().container.services.queue.getQueue(principal, ws.workspace_id, brandId);
      expect(stored.slots).toEqual([{ days: ['mon', 'wed'], time: '09:00' }, { days: ['fri'], time: '17:30' }]);
      const next = byId(saved.html, 'next-slots');
      expect(next).toContain('2026-11-25 09:00');
      expect(next).toContain('2026-11-27 17:30');
      expect(saved.html).toMatch(/<input id="queue-zone" name="time_zone"[^>]* value="America\/New_York"/);
      expect(saved.html).toContain('id="slot-0-wed" name="slot-0-day" value="wed" checked');
      expect(saved.html).toContain('<input type="hidden" name="rows" value="4">');

      const refused = await client.post(`/dashboard/brands/${brandId}/queue`, {
        rows: '3',
        time_zone: 'America/New_York',
        'slot-0-day': ['mon'],
        'slot-0-time': '09:00',
        'slot-2-day': [],
        'slot-2-time': '25:00',
      });
      expect(refused.status).toBe(400);
      expect(byId(refused.html, 'slot-2-days-error')).not.toBe('');
      expect(byId(refused.html, 'slot-2-time-error')).toContain('HH:MM');
      expect(refused.html).toContain('value="25:00"');
      const zone = await client.post(`/dashboard/brands/${brandId}/queue`, { rows: '0', time_zone: 'Mars/Olympus' });
      expect(zone.status).toBe(400);
      expect(byId(zone.html, 'queue-zone-error')).toContain('unknown time zone');
      expect((await server().container.services.queue.getQueue(principal, ws.workspace_id, brandId)).slots).toHaveLength(2);

      const unknown = await client.get('/dashboard/brands/brand_nope/queue');
      expect(unknown.status).toBe(404);
    });

    it('another workspace’s content cannot be edited, canceled or published from the dashboard', async () => {
      const mine = await scheduler(server());
      const theirs = await scheduler(server());
      const foreign = await theirs.create({ text: 'Not yours', draft: true });
      for (const action of ['edit', 'cancel', 'publish']) {
        const page = await mine.client.post(`/dashboard/contents/${foreign.content_id}/${action}`, { text: 'x', when: 'draft' });
        expect(page.status, action).toBe(404);
      }
      expect((await theirs.get(foreign.content_id)).status).toBe('draft');
    });
  },
  {},
  () => ({ clock: new ManualClock(NOW) }),
);
