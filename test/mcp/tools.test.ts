import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { tools } from '../../tools/index.js';
import { ManualClock } from '../../src/core/clock.js';
import { createContentInputSchema } from '../../src/core/contents/contents.schema.js';
import { testDatabaseKinds } from '../support/databases.js';
import { brandWithConnections } from '../support/factories.js';
import { runToEnd, withStdioWorkspace } from '../support/process.js';
import { describeEachDb, TEST_SECRET_KEY, type TestServer } from '../support/server.js';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

/** An SDK client on `/mcp` with the key as bearer; tools are listed first so the client checks output schemas. */
async function connect(server: TestServer, key: string): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  open.push(client);
  await client.listTools();
  return client;
}

/**
 * A call expected to fail, through `client.callTool` as every real client makes it (SDK 1.32 validates
 * structuredContent against the output schema even on isError results, typescript-sdk#1943): the result is
 * isError, has no structured content, and its text is the REST error body, returned parsed.
 */
async function callFailing(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, name).toBe(true);
  expect(result.structuredContent, name).toBeUndefined();
  expect(result.content).toHaveLength(1);
  const text = result.content[0];
  return JSON.parse(text?.type === 'text' ? text.text : 'null') as Record<string, unknown>;
}

async function call<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
  const text = result.content[0];
  expect(text?.type === 'text' ? JSON.parse(text.text) : undefined).toEqual(result.structuredContent);
  return result.structuredContent as T;
}

/** node:http, because fetch will not send a Host header of our choosing. */
function rawPost(url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describeEachDb(
  'MCP over Streamable HTTP',
  (server) => {
    it('tools/list offers every tool of the registry with object schemas and all four hints', async () => {
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const { tools: listed } = await client.listTools();
      expect(listed.map((t) => t.name).sort()).toEqual(tools.map((t) => t.name).sort());
      for (const tool of listed) {
        expect(tool.inputSchema.type).toBe('object');
        expect(tool.outputSchema?.type).toBe('object');
        expect(tool.title).toBeTruthy();
        for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
          expect(typeof tool.annotations?.[hint]).toBe('boolean');
        }
      }
    });

    it('publish_content on sandbox connections, then get_content shows published jobs with post URLs', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads', 'linkedin']);
      const client = await connect(server(), ws.api_key);
      const created = await call<{ content_id: string; jobs: unknown[] }>(client, 'publish_content', {
        brand_id: brandId,
        target_platforms: ['threads', 'linkedin'],
        content_type: 'text',
        text: 'Hello from an assistant.',
      });
      expect(created.jobs).toHaveLength(2);
      await server().settle();
      const content = await call<{ status: string; jobs: { status: string; external_post_url: string | null }[] }>(client, 'get_content', {
        content_id: created.content_id,
      });
      expect(content.status).toBe('published');
      for (const job of content.jobs) {
        expect(job.status).toBe('published');
        expect(job.external_post_url).toMatch(/^https:\/\//);
      }
    });

    it('arguments of the wrong shape are an isError validation_failed in the same body, naming each path', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const client = await connect(server(), ws.api_key);
      const body = await callFailing(client, 'publish_content', { brand_id: brandId, target_platforms: 'threads', content_type: 'poem', text: 5 });
      expect(body).toMatchObject({ error: 'validation_failed', request_id: expect.stringMatching(/^req_/) });
      const message = String(body.message);
      for (const path of ['target_platforms', 'content_type', 'text']) expect(message).toContain(path);
      const fields = (body as { fields: { path: string }[] }).fields.map((f) => f.path);
      expect(fields).toEqual(expect.arrayContaining(['target_platforms', 'content_type', 'text']));
      // An unknown tool stays a protocol error, its message prefixed once (by the client).
      await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/^MCP error -32602: Tool no_such_tool not found$/);
      expect(await call<{ data: unknown[] }>(client, 'list_contents', {})).toMatchObject({ data: [] });
    });

    it('a core error is an isError result carrying the REST error body (caption_too_long)', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const client = await connect(server(), ws.api_key);
      const body = await callFailing(client, 'publish_content', {
        brand_id: brandId,
        target_platforms: ['threads'],
        content_type: 'text',
        text: 'x'.repeat(501),
      });
      expect(body).toMatchObject({ error: 'caption_too_long', message: expect.any(String), request_id: expect.stringMatching(/^req_/) });
      // Nothing was stored or charged.
      expect(await call<{ data: unknown[] }>(client, 'list_contents', {})).toMatchObject({ data: [] });
    });

    it('wallet tools: price, statement and offers; a missing price is an isError operacao_sem_preco', async () => {
      const ws = await server().workspace();
      await server().container.services.wallet.grant({ workspaceId: ws.workspace_id, amount: 12, source: 'grant', expiresAt: null });
      const client = await connect(server(), ws.api_key);
      expect(await call(client, 'get_wallet_price', { operacao: 'publicacao', quantidade: 2 })).toMatchObject({ operacao: 'publicacao', quantidade: 2, saldo_disponivel: 12 });
      expect(await call<{ saldo: number }>(client, 'get_wallet', {})).toMatchObject({ saldo: 12 });
      expect((await call<{ data: unknown[] }>(client, 'list_wallet_offers', {})).data.length).toBeGreaterThan(0);
      expect(await callFailing(client, 'get_wallet_price', { operacao: 'teleport' })).toMatchObject({ error: 'operacao_sem_preco', operacao: 'teleport' });
    });

    it("a workspace's key cannot read another workspace's content (not_found)", async () => {
      const a = await brandWithConnections(server(), ['linkedin']);
      const b = await server().workspace('Other');
      const clientA = await connect(server(), a.ws.api_key);
      const created = await call<{ content_id: string }>(clientA, 'publish_content', {
        brand_id: a.brandId,
        target_platforms: ['linkedin'],
        content_type: 'text',
        text: 'Private.',
      });
      const clientB = await connect(server(), b.api_key);
      expect(await callFailing(clientB, 'get_content', { content_id: created.content_id })).toMatchObject({ error: 'not_found' });
      // Publishing on A's brand from B is refused the same way.
      const publish = await callFailing(clientB, 'publish_content', { brand_id: a.brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'x' });
      expect(publish).toMatchObject({ error: 'not_found' });
    });

    it('publish_content with the same idempotency_key twice returns the same content', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const client = await connect(server(), ws.api_key);
      const args = { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'Once.', idempotency_key: 'mcp-launch-1' };
      const first = await call<{ content_id: string }>(client, 'publish_content', args);
      const second = await call<{ content_id: string }>(client, 'publish_content', args);
      expect(second.content_id).toBe(first.content_id);
      expect((await call<{ data: unknown[] }>(client, 'list_contents', {})).data).toHaveLength(1);
      expect(await callFailing(client, 'publish_content', { ...args, text: 'Something else.' })).toMatchObject({ error: 'idempotency_conflict' });
    });

    it('a malformed idempotency key is refused the same way by every door: 400 validation_failed naming the field, nothing created', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const content = { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'Keyed.' };
      const rule = 'must be 1 to 255 printable ASCII characters';
      for (const bad of ['with space', 'é', 'x'.repeat(256), '']) {
        const rest = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
          key: ws.api_key,
          body: content,
          headers: { 'idempotency-key': bad },
        });
        expect(rest.status, bad).toBe(400);
        expect(rest.body).toMatchObject({ error: 'validation_failed', message: `Idempotency-Key: ${rule}`, fields: [{ path: 'Idempotency-Key', message: rule }] });

        const client = await connect(server(), ws.api_key);
        expect(await callFailing(client, 'publish_content', { ...content, idempotency_key: bad })).toMatchObject({
          error: 'validation_failed',
          fields: [{ path: 'idempotency_key', message: rule }],
        });

        // Any other caller of the core (the dashboard) gets the same refusal from contents.create itself.
        const principal = { kind: 'api_key' as const, workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin' as const, brandIds: null };
        const core = server().container.services.contents.create(principal, ws.workspace_id, createContentInputSchema.parse(content), bad);
        await expect(core).rejects.toMatchObject({ code: 'validation_failed', message: `idempotency_key: ${rule}`, extra: { fields: [{ path: 'idempotency_key', message: rule }] } });
      }
      const client = await connect(server(), ws.api_key);
      expect((await call<{ data: unknown[] }>(client, 'list_contents', {})).data).toHaveLength(0);
    });

    it('without a credential: 401 in the spec format with WWW-Authenticate naming the resource metadata and the scope', async () => {
      const res = await server().request('POST', '/mcp', { body: INITIALIZE, headers: MCP_HEADERS, unchecked: true });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ error: 'invalid_api_key', message: expect.any(String), request_id: res.headers.get('x-request-id') });
      const metadata = `${server().service.baseUrl}/.well-known/oauth-protected-resource/mcp`;
      // MCP 2025-11-25 authorization (scope selection): the challenge SHOULD name the scope a token needs.
      expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadata}", scope="mcp"`);

      const bad = await server().request('POST', '/mcp', { key: 'svc_live_' + '0'.repeat(32), body: INITIALIZE, headers: MCP_HEADERS, unchecked: true });
      expect(bad.status).toBe(401);
      expect(bad.headers.get('www-authenticate')).toContain('error="invalid_token"');
      expect(bad.headers.get('www-authenticate')).toContain(`resource_metadata="${metadata}"`);
      expect(bad.headers.get('www-authenticate')).toContain('scope="mcp"');
    });

    it('GET and DELETE /mcp answer 405 (stateless: no stream, no session)', async () => {
      for (const method of ['GET', 'DELETE']) {
        const res = await server().request(method, '/mcp', { headers: { accept: 'text/event-stream' }, unchecked: true });
        expect(res.status).toBe(405);
        expect(res.headers.get('allow')).toContain('POST');
        expect(res.body).toMatchObject({ error: { message: expect.any(String) } });
      }
    });

    it('refuses a foreign Origin or Host; answers CORS for an accepted Origin', async () => {
      const ws = await server().workspace();
      const auth = { ...MCP_HEADERS, authorization: `Bearer ${ws.api_key}` };
      const foreign = await server().request('POST', '/mcp', { body: INITIALIZE, headers: { ...auth, origin: 'https://evil.example' }, unchecked: true });
      expect(foreign.status).toBe(403);
      expect(foreign.body).toMatchObject({ error: 'forbidden' });
      expect(foreign.headers.get('access-control-allow-origin')).toBeNull();

      const rebound = await rawPost(`${server().url}/mcp`, { ...auth, host: `evil.example:${new URL(server().url).port}` }, INITIALIZE);
      expect(rebound.status).toBe(403);
      expect(JSON.parse(rebound.body)).toMatchObject({ error: 'forbidden' });

      const local = 'http://localhost:6274';
      const preflight = await fetch(`${server().url}/mcp`, {
        method: 'OPTIONS',
        headers: { origin: local, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-protocol-version' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(local);
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Authorization.*Content-Type.*Mcp-Protocol-Version.*Mcp-Method.*Mcp-Name/);

      const allowed = await server().request('POST', '/mcp', { body: INITIALIZE, headers: { ...MCP_HEADERS, origin: local }, unchecked: true });
      expect(allowed.status).toBe(401);
      expect(allowed.headers.get('access-control-allow-origin')).toBe(local);
      expect(allowed.headers.get('access-control-expose-headers')).toMatch(/WWW-Authenticate.*Mcp-Session-Id/);

      const ok = await server().request('POST', '/mcp', { body: INITIALIZE, headers: { ...auth, origin: local }, unchecked: true });
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ result: { serverInfo: { name: 'multi-network-publisher' } } });
    });
  },
  {},
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);

describeEachDb(
  'MCP rate limit',
  (server) => {
    it('counts every authenticated MCP request on the workspace budget: 429 with Retry-After past it', async () => {
      const ws = await server().workspace();
      const headers = { ...MCP_HEADERS, authorization: `Bearer ${ws.api_key}` };
      for (let i = 0; i < 2; i++) {
        expect((await server().request('POST', '/mcp', { body: INITIALIZE, headers, unchecked: true })).status).toBe(200);
      }
      const limited = await server().request('POST', '/mcp', { body: INITIALIZE, headers, unchecked: true });
      expect(limited.status).toBe(429);
      expect(limited.body).toMatchObject({ error: 'rate_limited', request_id: limited.headers.get('x-request-id') });
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    });
  },
  { RATE_LIMIT_PER_MINUTE: '2' },
  () => ({ workers: false }),
);

describe('MCP over stdio', () => {
  const sqlite = testDatabaseKinds().find((k) => k.name === 'sqlite')!;

  it('serves the same tools to a spawned process, with nothing but the protocol on stdout', async () => {
    await withStdioWorkspace('Stdio', async (params) => {
      const transport = new StdioClientTransport(params);
      let stderr = '';
      transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      const client = new Client({ name: 'stdio-test', version: '1.0.0' });
      // A stray line on stdout (a banner, a log) would surface here as a parse error.
      const errors: Error[] = [];
      client.onerror = (err) => errors.push(err);
      await client.connect(transport);
      try {
        await client.listTools();
        const result = (await client.callTool({ name: 'list_platforms', arguments: {} })) as CallToolResult;
        expect(result.isError ?? false).toBe(false);
        expect((result.structuredContent as { data: { slug: string }[] }).data.map((p) => p.slug)).toContain('threads');
        const usage = (await client.callTool({ name: 'get_usage', arguments: {} })) as CallToolResult;
        expect(usage.structuredContent).toMatchObject({ plan: 'default' });
      } finally {
        await client.close();
      }
      expect(errors).toEqual([]);
      // Logs went to stderr, as JSON lines.
      expect(stderr).toContain('MCP server ready on stdio');
    });
  }, 60_000);

  it('refuses to start without a usable key: exit 2, nothing on stdout', async () => {
    const db = await sqlite.create();
    try {
      const env = { DATABASE_URL: db.url, SECRET_KEY: TEST_SECRET_KEY };
      const missing = await runToEnd('src/mcp-stdio.ts', [], env);
      expect(missing).toMatchObject({ code: 2, stdout: '' });
      expect(missing.stderr).toContain('PUBLISHER_API_KEY');
      const unknown = await runToEnd('src/mcp-stdio.ts', [], { ...env, PUBLISHER_API_KEY: 'svc_live_' + '1'.repeat(32) });
      expect(unknown).toMatchObject({ code: 2, stdout: '' });
    } finally {
      await db.drop();
    }
  }, 60_000);
});
