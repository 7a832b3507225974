import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { Content, CreatedContent, UpdatedContent } from '../../src/core/contents/contents.schema.js';
import type { Usage } from '../../src/core/meters/meters.schema.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';

// Monday 23 November 2026, 12:00 UTC (07:00 in New York, 13:00 in Berlin): every test starts here.
const START = Date.UTC(2026, 10, 23, 12);
const HOUR = 3_600_000;

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

/** An SDK client on `/mcp`; tools are listed first so the client checks every result against its output schema. */
async function connect(server: TestServer, key: string): Promise<Client> {
  const client = new Client({ name: 'mcp-scheduling-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  open.push(client);
  await client.listTools();
  return client;
}

async function call<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError ?? false, `${name}: ${JSON.stringify(result.content)}`).toBe(false);
  const text = result.content[0];
  expect(text?.type === 'text' ? JSON.parse(text.text) : undefined).toEqual(result.structuredContent);
  return result.structuredContent as T;
}

/** A call that must fail as every tool error does: isError, no structured content, the REST error body as text. */
async function callFailing(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBe(true);
  expect(result.structuredContent, name).toBeUndefined();
  expect(result.content).toHaveLength(1);
  const text = result.content[0];
  return JSON.parse(text?.type === 'text' ? text.text : 'null') as Record<string, unknown>;
}

function used(usage: Usage, meter: string): number {
  const found = usage.meters.find((m) => m.meter === meter);
  if (!found) throw new Error(`no meter ${meter}`);
  return found.used;
}

function fieldPaths(body: Record<string, unknown>): string[] {
  return (body.fields as { path: string }[]).map((f) => f.path);
}

describeEachDb(
  'MCP scheduling tools',
  (server) => {
    const clock = (): ManualClock => server().container.clock as ManualClock;

    /** A fresh workspace with a brand on sandbox Facebook and LinkedIn, its MCP client, at START. */
    async function setup() {
      clock().set(START);
      const { ws, brandId } = await brandWithConnections(server(), ['facebook', 'linkedin']);
      const client = await connect(server(), ws.api_key);
      const post = (text: string, extra: Record<string, unknown> = {}) => ({ brand_id: brandId, target_platforms: ['facebook', 'linkedin'], content_type: 'text', text, ...extra });
      return { ws, brandId, client, post };
    }

    it('tools/list offers the scheduling tools with hints that match what they do, and says which zone to use', async () => {
      const { client } = await setup();
      const { tools } = await client.listTools();
      const byName = new Map(tools.map((t) => [t.name, t]));
      expect(byName.get('update_content')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: true }); // overwrites fields; a draft given a time will publish
      expect(byName.get('cancel_content')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });
      expect(byName.get('publish_content_now')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: true }); // gives up the scheduled time
      for (const name of ['publish_content', 'update_content']) {
        const tool = byName.get(name);
        for (const field of ['publish_at', 'time_zone', 'queue', 'draft']) expect(tool?.inputSchema.properties, `${name}.${field}`).toHaveProperty(field);
        // The model is told the zone rule and that times are checked.
        expect(tool?.description).toMatch(/IANA/);
        expect(tool?.description).toMatch(/365 days/);
        expect(tool?.description).toMatch(/validation_failed/);
      }
      for (const name of ['update_content', 'cancel_content', 'publish_content_now']) {
        expect(byName.get(name)?.inputSchema.required, name).toEqual(['content_id']);
        expect(byName.get(name)?.description, name).toMatch(/content_not_editable/);
      }
      const list = byName.get('list_contents')?.inputSchema.properties as Record<string, { enum?: string[] }>;
      expect(list.status?.enum).toEqual(expect.arrayContaining(['draft', 'scheduled', 'canceled']));
      expect(list).toHaveProperty('from');
      expect(list).toHaveProperty('to');
    });

    it('publish_content with a local publish_at in time_zone schedules at that zone\'s instant, charges nothing until it starts, then publishes once at its time', async () => {
      const { client, post } = await setup();
      const scheduled = await call<CreatedContent>(client, 'publish_content', post('Tomorrow at nine in New York.', { publish_at: '2026-11-24T09:00', time_zone: 'America/New_York', idempotency_key: 'mcp-sched-1' }));
      expect(scheduled).toMatchObject({ status: 'scheduled', publish_at: '2026-11-24T14:00:00.000Z', time_zone: 'America/New_York', local_publish_at: '2026-11-24T09:00', queued: false });
      expect(scheduled.jobs.map((j) => j.status)).toEqual(['scheduled', 'scheduled']);
      expect(used(await call<Usage>(client, 'get_usage', {}), 'publicacoes')).toBe(0);
      expect(used(await call<Usage>(client, 'get_usage', {}), 'criacao_de_conteudos')).toBe(0);

      // One millisecond early, nothing starts.
      clock().set(Date.UTC(2026, 10, 24, 14) - 1);
      await server().settle();
      expect(await call<Content>(client, 'get_content', { content_id: scheduled.content_id })).toMatchObject({ status: 'scheduled' });

      clock().set(Date.UTC(2026, 10, 24, 14));
      await server().settle();
      const done = await call<Content>(client, 'get_content', { content_id: scheduled.content_id });
      expect(done.status).toBe('published');
      expect(done.jobs.map((j) => j.status)).toEqual(['published', 'published']);
      const usage = await call<Usage>(client, 'get_usage', {});
      expect(used(usage, 'publicacoes')).toBe(2);
      expect(used(usage, 'criacao_de_conteudos')).toBe(1);
    });

    it('queue: true takes the brand\'s next free slot in the queue\'s zone; cancel_content frees it for the next queued post', async () => {
      const { client, brandId, post } = await setup();
      const noQueue = await callFailing(client, 'publish_content', post('Too early.', { queue: true }));
      expect(noQueue).toMatchObject({ error: 'validation_failed' });
      expect(fieldPaths(noQueue)).toEqual(['queue']);

      await call(client, 'set_queue', { brand_id: brandId, time_zone: 'Europe/Berlin', slots: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], time: '10:00' }] });
      const first = await call<CreatedContent>(client, 'publish_content', post('First in line.', { queue: true }));
      const second = await call<CreatedContent>(client, 'publish_content', post('Second in line.', { queue: true }));
      expect(first).toMatchObject({ status: 'scheduled', queued: true, publish_at: '2026-11-24T09:00:00.000Z', time_zone: 'Europe/Berlin', local_publish_at: '2026-11-24T10:00' });
      expect(second).toMatchObject({ status: 'scheduled', queued: true, publish_at: '2026-11-25T09:00:00.000Z' });
      const queue = await call<{ next_slots: { at: string }[] }>(client, 'get_queue', { brand_id: brandId });
      expect(Date.parse(queue.next_slots[0]!.at)).toBe(Date.UTC(2026, 10, 26, 9));

      const canceled = await call<Content>(client, 'cancel_content', { content_id: first.content_id });
      expect(canceled).toMatchObject({ status: 'canceled', queued: false, jobs: [] });
      // Canceling again answers the canceled content again (the tool is idempotent).
      expect(await call<Content>(client, 'cancel_content', { content_id: first.content_id })).toMatchObject({ status: 'canceled' });

      const third = await call<CreatedContent>(client, 'publish_content', post('Takes the freed slot.', { queue: true }));
      expect(third.publish_at).toBe('2026-11-24T09:00:00.000Z');

      // At the slot, only the post holding it publishes; the canceled one never does.
      clock().set(Date.UTC(2026, 10, 24, 9));
      await server().settle();
      expect(await call<Content>(client, 'get_content', { content_id: third.content_id })).toMatchObject({ status: 'published' });
      expect(await call<Content>(client, 'get_content', { content_id: first.content_id })).toMatchObject({ status: 'canceled', jobs: [] });
      expect(await call<Content>(client, 'get_content', { content_id: second.content_id })).toMatchObject({ status: 'scheduled' });
      expect(used(await call<Usage>(client, 'get_usage', {}), 'publicacoes')).toBe(2);
    });

    it('draft: true saves a draft; update_content edits and schedules it, then turns it back into a draft; publish_content_now publishes and charges it', async () => {
      const { client, post } = await setup();
      const draft = await call<CreatedContent>(client, 'publish_content', post('A first idea.', { draft: true }));
      expect(draft).toMatchObject({ status: 'draft', publish_at: null, time_zone: null, local_publish_at: null, queued: false, jobs: [] });

      const nothing = await callFailing(client, 'update_content', { content_id: draft.content_id, idempotency_key: 'edit-nothing' });
      expect(nothing).toMatchObject({ error: 'validation_failed' });

      const edit = { content_id: draft.content_id, text: 'A better idea.', target_platforms: ['linkedin'], publish_at: '2026-11-25T18:30:00+01:00', idempotency_key: 'edit-1' };
      const scheduled = await call<Content>(client, 'update_content', edit);
      expect(scheduled).toMatchObject({ status: 'scheduled', text: 'A better idea.', target_platforms: ['linkedin'], publish_at: '2026-11-25T17:30:00.000Z', time_zone: 'UTC' });
      expect(scheduled.jobs.map((j) => [j.platform_slug, j.status])).toEqual([['linkedin', 'scheduled']]);
      // The same key and changes replay the first answer; other changes under it are a conflict.
      expect(await call<Content>(client, 'update_content', edit)).toEqual(scheduled);
      expect(await callFailing(client, 'update_content', { ...edit, text: 'Else.' })).toMatchObject({ error: 'idempotency_conflict' });

      // A local time without a zone is read in the zone the content was scheduled in.
      const moved = await call<Content>(client, 'update_content', { content_id: draft.content_id, publish_at: '2026-11-26T08:00', time_zone: 'Asia/Tokyo' });
      expect(moved).toMatchObject({ publish_at: '2026-11-25T23:00:00.000Z', time_zone: 'Asia/Tokyo', local_publish_at: '2026-11-26T08:00' });
      const again = await call<Content>(client, 'update_content', { content_id: draft.content_id, publish_at: '2026-11-27T08:00' });
      expect(again).toMatchObject({ publish_at: '2026-11-26T23:00:00.000Z', time_zone: 'Asia/Tokyo', local_publish_at: '2026-11-27T08:00' });

      const back = await call<Content>(client, 'update_content', { content_id: draft.content_id, draft: true, title: null });
      expect(back).toMatchObject({ status: 'draft', publish_at: null, jobs: [] });
      expect(used(await call<Usage>(client, 'get_usage', {}), 'publicacoes')).toBe(0);

      const now = await call<Content>(client, 'publish_content_now', { content_id: draft.content_id, idempotency_key: 'go-1' });
      expect(now).toMatchObject({ status: 'publishing', publish_at: new Date(START).toISOString() });
      expect(now.jobs.map((j) => j.platform_slug)).toEqual(['linkedin']);
      // Replayed with its key, or refused without one: never published twice.
      expect(await call<Content>(client, 'publish_content_now', { content_id: draft.content_id, idempotency_key: 'go-1' })).toEqual(now);
      expect(await callFailing(client, 'publish_content_now', { content_id: draft.content_id })).toMatchObject({ error: 'content_not_editable' });
      await server().settle();
      expect(await call<Content>(client, 'get_content', { content_id: draft.content_id })).toMatchObject({ status: 'published', text: 'A better idea.' });
      const usage = await call<Usage>(client, 'get_usage', {});
      expect(used(usage, 'publicacoes')).toBe(1);
      expect(used(usage, 'criacao_de_conteudos')).toBe(1);
    });

    it('get_content shows each platform\'s own text; update_content of the shared text says which platforms kept theirs', async () => {
      const { client, post } = await setup();
      const made = await call<CreatedContent>(client, 'publish_content', post('Dowtown lunch.', { overrides: { linkedin: { text: 'Dowtown lunch for teams.' } }, publish_at: '2026-11-25T09:00:00Z' }));
      const shown = await call<Content>(client, 'get_content', { content_id: made.content_id });
      expect(shown.overrides).toEqual({ linkedin: { text: 'Dowtown lunch for teams.' } });
      expect(shown.targets.map((t) => [t.platform_slug, t.text, t.own_text])).toEqual([
        ['facebook', 'Dowtown lunch.', false],
        ['linkedin', 'Dowtown lunch for teams.', true],
      ]);
      const result = (await client.callTool({ name: 'update_content', arguments: { content_id: made.content_id, text: 'Downtown lunch.' } })) as CallToolResult;
      const edited = result.structuredContent as UpdatedContent;
      expect(edited.kept_overrides).toEqual([{ platform_slug: 'linkedin', fields: ['text'] }]);
      expect(edited.targets.map((t) => t.text)).toEqual(['Downtown lunch.', 'Dowtown lunch for teams.']);
      // The summary a model reads says it too, and how to change it.
      expect(JSON.stringify(result.content)).toContain('linkedin keeps its own text (change overrides to edit it)');
    });

    it('list_contents with status scheduled and a from/to window is the calendar: earliest publish_at first, page by page', async () => {
      const { client, post } = await setup();
      const at = async (text: string, publishAt: string) => (await call<CreatedContent>(client, 'publish_content', post(text, { publish_at: publishAt }))).content_id;
      await at('Thursday', '2026-11-26T09:00:00Z');
      await at('Tuesday', '2026-11-24T09:00:00Z');
      await at('Next month', '2026-12-24T09:00:00Z');
      await at('Wednesday', '2026-11-25T09:00:00-05:00');
      await call(client, 'publish_content', post('A draft', { draft: true }));
      const canceled = await at('Canceled Tuesday', '2026-11-24T10:00:00Z');
      await call(client, 'cancel_content', { content_id: canceled });

      const window = { status: 'scheduled', from: '2026-11-24T00:00:00Z', to: '2026-11-27T00:00:00+00:00' };
      const first = await call<{ data: Content[]; next_cursor: string | null }>(client, 'list_contents', { ...window, limit: 2 });
      expect(first.data.map((c) => c.text)).toEqual(['Tuesday', 'Wednesday']);
      expect(first.next_cursor).not.toBeNull();
      const rest = await call<{ data: Content[]; next_cursor: string | null }>(client, 'list_contents', { ...window, limit: 2, cursor: first.next_cursor });
      expect(rest).toMatchObject({ data: [{ text: 'Thursday' }], next_cursor: null });

      expect((await call<{ data: Content[] }>(client, 'list_contents', { status: 'draft' })).data.map((c) => c.text)).toEqual(['A draft']);
      expect((await call<{ data: Content[] }>(client, 'list_contents', { status: 'canceled' })).data.map((c) => c.text)).toEqual(['Canceled Tuesday']);
      const backwards = await callFailing(client, 'list_contents', { from: '2026-11-27T00:00:00Z', to: '2026-11-24T00:00:00Z' });
      expect(backwards).toMatchObject({ error: 'validation_failed' });
      expect(fieldPaths(backwards)).toEqual(['to']);
      expect(await callFailing(client, 'list_contents', { status: 'sleeping' })).toMatchObject({ error: 'validation_failed' });
    });

    it('once publishing has started, update_content, cancel_content and publish_content_now are content_not_editable tool errors', async () => {
      const { client, post } = await setup();
      const scheduled = await call<CreatedContent>(client, 'publish_content', post('Soon.', { publish_at: '2026-11-23T13:00:00Z' }));
      clock().set(Date.UTC(2026, 10, 23, 13));
      await server().container.scheduler.drain();
      expect(await call<Content>(client, 'get_content', { content_id: scheduled.content_id })).toMatchObject({ status: 'publishing' });
      const id = { content_id: scheduled.content_id };
      for (const [name, args] of [
        ['update_content', { ...id, text: 'Too late.' }],
        ['cancel_content', id],
        ['publish_content_now', id],
      ] as const) {
        expect(await callFailing(client, name, args), name).toMatchObject({ error: 'content_not_editable', status: 'publishing', request_id: expect.stringMatching(/^req_/) });
      }
      await server().settle();
      expect(await call<Content>(client, 'get_content', id)).toMatchObject({ status: 'published', text: 'Soon.' });
      expect(await callFailing(client, 'update_content', { ...id, publish_at: '2026-11-24T09:00:00Z' })).toMatchObject({ error: 'content_not_editable', status: 'published' });

      const dropped = await call<CreatedContent>(client, 'publish_content', post('Dropped.', { draft: true }));
      await call(client, 'cancel_content', { content_id: dropped.content_id });
      for (const name of ['update_content', 'publish_content_now'] as const) {
        const args = name === 'update_content' ? { content_id: dropped.content_id, text: 'Revived?' } : { content_id: dropped.content_id };
        expect(await callFailing(client, name, args), name).toMatchObject({ error: 'content_not_editable', status: 'canceled' });
      }
    });

    it('times are checked: past, more than 365 days ahead, malformed, unknown zone or mixed timings are validation_failed naming the field; nothing is stored', async () => {
      const { client, post } = await setup();
      const refusals: [Record<string, unknown>, string][] = [
        [{ publish_at: '2026-11-23T11:59:00Z' }, 'publish_at'],
        [{ publish_at: '2026-11-23T07:00', time_zone: 'America/New_York' }, 'publish_at'],
        [{ publish_at: '2027-11-24T12:00:00Z' }, 'publish_at'],
        [{ publish_at: 'tomorrow at 9' }, 'publish_at'],
        [{ publish_at: '2027-02-30T09:00:00Z' }, 'publish_at'],
        [{ publish_at: '2026-12-01T24:00', time_zone: 'UTC' }, 'publish_at'],
        [{ publish_at: '2026-02-30T09:00', time_zone: 'Europe/Berlin' }, 'publish_at'],
        [{ publish_at: '2026-12-01T09:60', time_zone: 'America/New_York' }, 'publish_at'],
        [{ publish_at: '2026-11-24T09:00', time_zone: 'Mars/Olympus' }, 'time_zone'],
        [{ time_zone: 'Europe/Berlin' }, 'time_zone'],
        [{ publish_at: '2026-11-24T09:00:00Z', draft: true }, 'draft'],
      ];
      for (const [timing, path] of refusals) {
        const body = await callFailing(client, 'publish_content', post('Checked.', timing));
        expect(body, JSON.stringify(timing)).toMatchObject({ error: 'validation_failed' });
        expect(fieldPaths(body), JSON.stringify(timing)).toContain(path);
      }
      // 365 days ahead is the last accepted instant.
      const edge = await call<CreatedContent>(client, 'publish_content', post('A year out.', { publish_at: new Date(START + 365 * 24 * HOUR).toISOString() }));
      expect(edge.status).toBe('scheduled');

      const past = await callFailing(client, 'update_content', { content_id: edge.content_id, publish_at: '2026-11-22T09:00:00Z' });
      expect(past).toMatchObject({ error: 'validation_failed' });
      expect(fieldPaths(past)).toEqual(['publish_at']);
      for (const publish_at of ['2026-12-01T24:00', '2026-02-30T09:00', '2026-12-01T09:60']) {
        const impossible = await callFailing(client, 'update_content', { content_id: edge.content_id, publish_at, time_zone: 'Asia/Tokyo' });
        expect(impossible, publish_at).toMatchObject({ error: 'validation_failed' });
        expect(fieldPaths(impossible), publish_at).toEqual(['publish_at']);
      }
      expect(await call<Content>(client, 'get_content', { content_id: edge.content_id })).toMatchObject({ publish_at: new Date(START + 365 * 24 * HOUR).toISOString() });
      expect((await call<{ data: Content[] }>(client, 'list_contents', {})).data.map((c) => c.text)).toEqual(['A year out.']);
    });
  },
  {},
  () => ({ clock: new ManualClock(START) }),
);
