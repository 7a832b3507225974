import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { brandWithConnections } from '../support/factories.js';
import type { ApiResponse, TestServer } from '../support/server.js';
import { describeEachDb } from '../support/server.js';

/**
 * Spec 7.2: a request the schema refuses is `400 validation_failed` whose message and `fields` name the path. A
 * post with nothing to read (no text, empty, only whitespace or invisible characters) is such a request, in
 * every door, because the REST API, the MCP tools and the dashboard share one zod schema. So is an empty upload.
 */

type Fields = { path: string; message: string }[];

const BLANKS = ['', ' ', '   \n\t ', '\u00a0\u3000', '\u200b\u200d\ufeff'];

async function counts(server: TestServer, ws: NewWorkspace) {
  const rows = await server.container.db.kysely.selectFrom('contents').select('id').where('workspace_id', '=', ws.workspace_id).execute();
  const usage = await server.request('GET', `/api/v1/workspaces/${ws.workspace_id}/usage`, { key: ws.api_key });
  const used = (m: string) => (usage.body.meters as { meter: string; used: number }[]).find((x) => x.meter === m)!.used;
  return { contents: rows.length, criacao: used('criacao_de_conteudos'), publicacoes: used('publicacoes'), media: used('media_storage') };
}

function post(server: TestServer, ws: NewWorkspace, body: Record<string, unknown>, query = ''): Promise<ApiResponse> {
  return server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents${query}`, { key: ws.api_key, body });
}

function expectRefused(res: ApiResponse, path: string): void {
  expect(res.status, res.text).toBe(400);
  expect(res.body.error).toBe('validation_failed');
  expect((res.body.fields as Fields).map((f) => f.path)).toEqual([path]);
  expect(res.body.message).toMatch(new RegExp(`^${path.replace(/[.[\]]/g, '\\$&')}: `));
}

describeEachDb(
  'blank posts and empty uploads',
  (server) => {
    it('REST: a text post with no text, empty text or only whitespace is 400 validation_failed naming text; nothing stored or charged', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads', 'linkedin']);
      const before = await counts(server(), ws);
      const base = { brand_id: brandId, target_platforms: ['threads', 'linkedin'], content_type: 'text' };

      const missing = await post(server(), ws, base);
      expectRefused(missing, 'text');
      expect((missing.body.fields as Fields)[0]!.message).toBe('required for content_type text');
      for (const text of BLANKS) {
        const blank = await post(server(), ws, { ...base, text });
        expectRefused(blank, 'text');
        expect((blank.body.fields as Fields)[0]!.message).toBe('must not be blank');
        // The dry run refuses it the same way.
        expectRefused(await post(server(), ws, { ...base, text }, '?dry_run=true'), 'text');
      }
      expect(await counts(server(), ws)).toEqual(before);

      // Visible text, even short or padded, is a post.
      expect((await post(server(), ws, { ...base, text: '  .  ' })).status).toBe(201);
    });

    it('REST: the text that is published on each platform is the one checked (overrides name their own path)', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads', 'linkedin']);
      const base = { brand_id: brandId, target_platforms: ['threads', 'linkedin'], content_type: 'text' };
      expectRefused(await post(server(), ws, { ...base, text: 'fine', overrides: { linkedin: { text: ' \n ' } } }), 'overrides.linkedin.text');
      // Without a main text, each platform needs its own.
      expectRefused(await post(server(), ws, { ...base, overrides: { linkedin: { text: 'own text' } } }), 'text');
      const own = await post(server(), ws, { ...base, text: '   ', overrides: { threads: { text: 'a' }, linkedin: { text: 'b' } } });
      expect(own.status).toBe(201);
    });

    it('REST: a blank post inside a thread is refused at its path; so is blank text to split into one', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const before = await counts(server(), ws);
      const base = { brand_id: brandId, target_platforms: ['threads'], content_type: 'thread' };
      expectRefused(await post(server(), ws, { ...base, thread: ['first', '  \t', 'third'] }), 'thread[1]');
      expectRefused(await post(server(), ws, { ...base, thread: ['', 'second'] }), 'thread[0]');
      expectRefused(await post(server(), ws, { ...base, thread: ['first', '\u200b'] }), 'thread[1]');
      expectRefused(await post(server(), ws, { ...base, text: ' \n\n ', thread_split: 'auto' }), 'text');
      expect(await counts(server(), ws)).toEqual(before);
      expect((await post(server(), ws, { ...base, thread: ['first', 'second'] })).status).toBe(201);
    });

    it('MCP: publish_content and preview_content refuse a blank post with validation_failed naming the path', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const before = await counts(server(), ws);
      const client = new Client({ name: 'blank-posts', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server().url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${ws.api_key}` } } }));
      try {
        const failing = async (name: string, args: Record<string, unknown>) => {
          const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
          expect(result.isError).toBe(true);
          const first = result.content[0];
          return JSON.parse(first?.type === 'text' ? first.text : 'null') as { error: string; fields: Fields };
        };
        const text = await failing('publish_content', { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: '  ' });
        expect(text.error).toBe('validation_failed');
        expect(text.fields.map((f) => f.path)).toEqual(['text']);
        const thread = await failing('publish_content', { brand_id: brandId, target_platforms: ['threads'], content_type: 'thread', thread: ['ok', ' '] });
        expect(thread.fields.map((f) => f.path)).toEqual(['thread[1]']);
        const preview = await failing('preview_content', { brand_id: brandId, target_platforms: ['threads'], content_type: 'text' });
        expect(preview.fields.map((f) => f.path)).toEqual(['text']);
      } finally {
        await client.close();
      }
      expect(await counts(server(), ws)).toEqual(before);
    });

    it('dashboard: a compose form with only whitespace as text comes back 400 with the error next to the text', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const before = await counts(server(), ws);
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key);
      const page = await client.get('/dashboard/compose');
      const key = /name="idempotency_key" value="([^"]+)"/.exec(page.html)![1]!;
      const form = new FormData();
      form.append('csrf', client.csrf!);
      form.append('idempotency_key', key);
      for (const [name, value] of [['brand_id', brandId], ['target_platforms', 'threads'], ['content_type', 'text'], ['text', ' \r\n  ']] as const) form.append(name, value);
      const res = await client.raw('/dashboard/compose', { method: 'POST', body: form });
      expect(res.status).toBe(400);
      const html = await res.text();
      expect(html).toMatch(/<textarea id="text" name="text"[^>]*aria-invalid="true"/);
      expect(textOf(/id="text-error"[^>]*>([\s\S]*?)<\/p>/.exec(html)?.[1] ?? '')).not.toBe('');
      expect(await counts(server(), ws)).toEqual(before);
    });

    it('an empty upload is 400 validation_failed naming the body; nothing stored or counted', async () => {
      const ws = await server().workspace();
      const before = await counts(server(), ws);
      const res = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/media`, {
        key: ws.api_key,
        rawBody: '',
        // fetch sends `Content-Length: 0` for the empty body itself; a second one would be a malformed request.
        headers: { 'content-type': 'image/jpeg' },
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'validation_failed', fields: [{ path: 'body', message: 'must not be empty' }] });
      expect(res.body.message).toMatch(/^body: /);
      const rows = await server().container.db.kysely.selectFrom('media').select('id').where('workspace_id', '=', ws.workspace_id).execute();
      expect(rows).toEqual([]);
      expect(await counts(server(), ws)).toEqual(before);

      // One byte is a file (what it holds is for the networks to judge).
      const one = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/media`, { key: ws.api_key, rawBody: 'x', headers: { 'content-type': 'image/jpeg' } });
      expect(one.status).toBe(201);
      expect(one.body.size_bytes).toBe(1);
    });
  },
  {},
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
