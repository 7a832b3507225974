import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { tools } from '../../tools/index.js';
import { brandWithConnections } from '../support/factories.js';
import { withStdioWorkspace } from '../support/process.js';
import { describeEachDb, type TestServer } from '../support/server.js';

/**
 * Both protocol eras on one endpoint, driven by the official SDK v2 client: `mode: 'auto'` probes with
 * `server/discover` and speaks 2026-07-28 (per-request envelope, `Mcp-Method` headers); the default mode is the
 * 2025 `initialize` handshake. The SDK v1 client (2025-11-25) and raw requests naming older revisions check the
 * same answers from the other side.
 */

interface Block {
  type: string;
  text?: string;
  uri?: string;
  name?: string;
}
interface Result {
  isError?: boolean;
  content: Block[];
  structuredContent?: Record<string, unknown>;
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

async function connectV2(server: TestServer, key: string, modern: boolean): Promise<Client> {
  const client = new Client({ name: 'eras-test', version: '1.0.0' }, modern ? { versionNegotiation: { mode: 'auto' } } : {});
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  open.push(client);
  return client;
}

function firstJson(result: Result): Record<string, unknown> {
  const first = result.content[0];
  expect(first?.type).toBe('text');
  return JSON.parse(first?.text ?? 'null') as Record<string, unknown>;
}

describeEachDb(
  'MCP protocol eras on /mcp',
  (server) => {
    it('SDK v2 client: auto negotiates 2026-07-28, the default negotiates 2025-11-25, and both see the same tools', async () => {
      const ws = await server().workspace();
      const modern = await connectV2(server(), ws.api_key, true);
      const legacy = await connectV2(server(), ws.api_key, false);
      expect(modern.getProtocolEra()).toBe('modern');
      expect(legacy.getProtocolEra()).toBe('legacy');

      const [modernTools, legacyTools] = await Promise.all([modern.listTools(), legacy.listTools()]);
      expect(modernTools.tools.map((t) => t.name)).toEqual(tools.map((t) => t.name));
      // Same schemas and hints in both eras: only the envelope differs.
      expect(modernTools.tools).toEqual(legacyTools.tools);
      for (const tool of modernTools.tools) expect(tool.annotations, tool.name).toMatchObject({ readOnlyHint: expect.any(Boolean), destructiveHint: expect.any(Boolean) });

      // The server names itself with icons in both eras (PNG first), and the icon is served.
      for (const client of [modern, legacy]) {
        const info = client.getServerVersion();
        expect(info).toMatchObject({ name: 'multi-network-publisher', title: expect.any(String) });
        const png = info?.icons?.[0];
        expect(png).toMatchObject({ mimeType: 'image/png', sizes: ['256x256'] });
        const icon = await fetch(png!.src);
        expect(icon.status).toBe(200);
        expect(icon.headers.get('content-type')).toBe('image/png');
        expect(Buffer.from(await icon.arrayBuffer()).subarray(1, 4).toString()).toBe('PNG');
      }
    });

    it('the same call gives the same structured answer in both eras, with a summary and links after the JSON', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      for (const modernEra of [true, false]) {
        const client = await connectV2(server(), ws.api_key, modernEra);
        await client.listTools();
        const result = (await client.callTool({
          name: 'publish_content',
          arguments: { brand_id: brandId, content_type: 'text', text: `eras ${String(modernEra)}`, target_platforms: ['threads'], draft: true },
        })) as Result;
        expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
        const json = firstJson(result);
        expect(json).toEqual(result.structuredContent);
        const id = json.content_id as string;
        const got = (await client.callTool({ name: 'get_content', arguments: { content_id: id } })) as Result;
        expect(got.structuredContent).toMatchObject({ content_id: id, status: 'draft' });
        // JSON, then the summary, then the link to the post's dashboard page.
        expect(got.content.map((b) => b.type)).toEqual(['text', 'text', 'resource_link']);
        expect(got.content[1]?.text).toContain(id);
        expect(got.content[2]?.uri).toBe(`${server().url}/dashboard/contents/${id}`);
      }
    });

    it('a failing call is an isError result carrying the REST error body in both eras', async () => {
      const ws = await server().workspace();
      for (const modernEra of [true, false]) {
        const client = await connectV2(server(), ws.api_key, modernEra);
        await client.listTools();
        const result = (await client.callTool({ name: 'get_content', arguments: { content_id: 'ct_missing' } })) as Result;
        expect(result.isError).toBe(true);
        expect(result.structuredContent).toBeUndefined();
        expect(firstJson(result)).toMatchObject({ error: 'not_found', request_id: expect.stringMatching(/^req_/) });
        // An unknown tool is a protocol error, not a tool result.
        await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/no_such_tool not found/);
      }
    });

    it('SDK v1 client (2025-11-25) still connects and calls, and sees what the v2 clients see', async () => {
      const ws = await server().workspace();
      const v1 = new ClientV1({ name: 'v1', version: '1.0.0' });
      await v1.connect(new HttpTransportV1(new URL(`${server().url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${ws.api_key}` } } }));
      open.push(v1);
      const modern = await connectV2(server(), ws.api_key, true);
      const [old, now] = await Promise.all([v1.listTools(), modern.listTools()]);
      expect(old.tools).toEqual(now.tools);
      const usage = await v1.callTool({ name: 'get_usage', arguments: {} });
      expect(usage.structuredContent).toMatchObject({ plan: 'default' });
    });

    it('every revision from 2024-11-05 to 2025-11-25 negotiates by initialize; resource links only from 2025-06-18', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${ws.api_key}` };
      const created = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, content_type: 'text', text: 'links', target_platforms: ['threads'], draft: true },
      });
      const contentId = created.body.content_id as string;
      for (const version of ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']) {
        const init = await fetch(`${server().url}/mcp`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
        });
        expect(((await init.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(version);
        const call = await fetch(`${server().url}/mcp`, {
          method: 'POST',
          headers: { ...headers, 'mcp-protocol-version': version },
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_content', arguments: { content_id: contentId } } }),
        });
        const { result } = (await call.json()) as { result: Result };
        expect(result.structuredContent, version).toMatchObject({ content_id: contentId });
        const linked = result.content.some((b) => b.type === 'resource_link');
        expect(linked, version).toBe(version >= '2025-06-18');
      }
    });
  },
  {},
  () => ({ workers: false }),
);

describe('MCP over stdio, both eras', () => {
  it('the SDK v2 client opens one process with server/discover and another with initialize', async () => {
    await withStdioWorkspace('Stdio eras', async (params) => {
      for (const modernEra of [true, false]) {
        const transport = new StdioClientTransport(params);
        const client = new Client({ name: 'stdio-eras', version: '1.0.0' }, modernEra ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
        const errors: Error[] = [];
        client.onerror = (err) => errors.push(err);
        await client.connect(transport);
        try {
          expect(client.getProtocolEra()).toBe(modernEra ? 'modern' : 'legacy');
          const listed = await client.listTools();
          expect(listed.tools).toHaveLength(tools.length);
          const usage = (await client.callTool({ name: 'get_usage', arguments: {} })) as Result;
          expect(usage.structuredContent).toMatchObject({ plan: 'default' });
        } finally {
          await client.close();
        }
        expect(errors).toEqual([]);
      }
    });
  }, 90_000);
});
