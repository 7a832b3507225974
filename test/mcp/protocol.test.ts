import { expect, it } from 'vitest';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';

/**
 * JSON-RPC framing on `/mcp` before the SDK dispatches anything (src/mcp/jsonrpc-guard.ts): batches and the
 * workspace rate limit (spec 8), and the unsupported-protocol-version error.
 */

const LIMIT = 20;
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

async function post(server: TestServer, key: string, body: unknown, version?: string): Promise<Answer> {
  const headers: Record<string, string> = { ...MCP_HEADERS, authorization: `Bearer ${key}` };
  if (version !== undefined) headers['mcp-protocol-version'] = version;
  const res = await fetch(`${server.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

function remaining(answer: Answer): number {
  return Number(answer.headers.get('x-ratelimit-remaining'));
}

function toolCall(id: number, name: string, args: Record<string, unknown> = {}) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

async function contentsOf(server: TestServer, workspaceId: string): Promise<number> {
  const rows = await server.container.db.kysely.selectFrom('contents').select('id').where('workspace_id', '=', workspaceId).execute();
  return rows.length;
}

describeEachDb(
  'MCP JSON-RPC batches and protocol versions',
  (server) => {
    it('2025-06-18 and later: a batch is refused with -32600 before any message runs, and costs one point', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const publish = (id: number) => toolCall(id, 'publish_content', { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: `Post ${id}` });
      const left: number[] = [];
      for (const version of ['2025-06-18', '2025-11-25']) {
        const answer = await post(server(), ws.api_key, [publish(1), publish(2)], version);
        expect(answer.status).toBe(400);
        expect(answer.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('batches') } });
        left.push(remaining(answer));
      }
      left.push(remaining(await post(server(), ws.api_key, toolCall(9, 'list_platforms'), '2025-11-25')));
      // The factory's own REST calls came first; from there each request cost exactly one point.
      expect(left).toEqual([left[0], left[0]! - 1, left[0]! - 2]);
      expect(await contentsOf(server(), ws.workspace_id)).toBe(0);

      // A lone initialize in a batch negotiates its own version: 2025-06-18 has no batches either.
      const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
      const refused = await post(server(), ws.api_key, [init]);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ error: { code: -32600 } });
    });

    it('before 2025-06-18: a batch runs and each of its messages costs one point on the workspace budget', async () => {
      const ws = await server().workspace();
      const batch = [1, 2, 3, 4].map((id) => toolCall(id, 'list_platforms'));
      const first = await post(server(), ws.api_key, batch, '2025-03-26');
      expect(first.status).toBe(200);
      expect(first.body).toHaveLength(4);
      expect(remaining(first)).toBe(LIMIT - 4);
      // Without the header the transport spec's default (2025-03-26) applies: batches allowed, charged the same.
      const second = await post(server(), ws.api_key, batch);
      expect(second.status).toBe(200);
      expect(remaining(second)).toBe(LIMIT - 8);
    });

    it('a batch larger than what is left of the budget is a 429 and none of its messages runs', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const publish = (id: number) => toolCall(id, 'publish_content', { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: `Post ${id}` });
      const batch = Array.from({ length: LIMIT + 5 }, (_, i) => publish(i));
      const answer = await post(server(), ws.api_key, batch, '2024-11-05');
      expect(answer.status).toBe(429);
      expect(answer.body).toMatchObject({ error: 'rate_limited' });
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await contentsOf(server(), ws.workspace_id)).toBe(0);
      // Past the transport's 100 messages a batch is refused outright, before its messages are charged.
      const fresh = await server().workspace('Fresh');
      const huge = await post(server(), fresh.api_key, Array.from({ length: 101 }, (_, i) => toolCall(i, 'get_usage')), '2024-11-05');
      expect(huge.status).toBe(400);
      expect(huge.body).toMatchObject({ id: null, error: { code: -32600, message: expect.stringContaining('100') } });
      expect(remaining(huge)).toBe(LIMIT - 1);
    });

    it('parallel batches never run more messages than the workspace budget', async () => {
      const ws = await server().workspace();
      const batch = [1, 2, 3].map((id) => toolCall(id, 'get_usage'));
      const answers = await Promise.all(Array.from({ length: 20 }, () => post(server(), ws.api_key, batch, '2025-03-26')));
      const ran = answers.filter((a) => a.status === 200).reduce((n, a) => n + (a.body as unknown[]).length, 0);
      expect(answers.every((a) => a.status === 200 || a.status === 429)).toBe(true);
      expect(ran).toBeGreaterThan(0);
      expect(ran).toBeLessThanOrEqual(LIMIT);
    });

    it('an unsupported MCP-Protocol-Version is a 400 that echoes the request id (null only for a batch or a notification)', async () => {
      const ws = await server().workspace();
      for (const id of [3, 'req-three']) {
        const answer = await post(server(), ws.api_key, { jsonrpc: '2.0', id, method: 'tools/list', params: {} }, '2099-01-01');
        expect(answer.status).toBe(400);
        expect(answer.body).toMatchObject({
          jsonrpc: '2.0',
          id,
          error: { code: -32000, message: expect.stringContaining('Unsupported protocol version: 2099-01-01'), data: { requested: '2099-01-01' } },
        });
        expect(JSON.stringify(answer.body)).toContain('2026-07-28');
      }
      const batch = await post(server(), ws.api_key, [toolCall(1, 'get_usage')], '2099-01-01');
      expect(batch.body).toMatchObject({ id: null, error: { code: -32000 } });
      // initialize negotiates in its body (MCP lifecycle): an unknown revision is answered with the latest one of its era.
      const init = { jsonrpc: '2.0', id: 7, method: 'initialize', params: { protocolVersion: '2099-01-01', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
      const negotiated = await post(server(), ws.api_key, init);
      expect(negotiated.status, JSON.stringify(negotiated.body)).toBe(200);
      expect(negotiated.body).toMatchObject({ id: 7, result: { protocolVersion: '2025-11-25' } });
      // The 2026-07-28 era has no initialize: the SDK refuses the handshake under a modern header, echoing the id.
      const mixed = await post(server(), ws.api_key, { ...init, params: { ...init.params, protocolVersion: '2026-07-28' } }, '2026-07-28');
      expect(mixed.status).toBe(400);
      expect(mixed.body).toMatchObject({ id: 7, error: { code: -32020 } });
      // A 2026-07-28 request naming an unknown revision gets that era's error, listing what server/discover offers.
      const meta = { 'io.modelcontextprotocol/protocolVersion': '2099-01-01', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
      const modern = await post(server(), ws.api_key, { jsonrpc: '2.0', id: 8, method: 'server/discover', params: { _meta: meta } }, '2099-01-01');
      expect(modern.status).toBe(400);
      expect(modern.body).toMatchObject({ id: 8, error: { code: -32022, data: { supported: ['2026-07-28'] } } });
    });
  },
  { RATE_LIMIT_PER_MINUTE: String(LIMIT) },
  () => ({ workers: false }),
);
