import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, expect, it } from 'vitest';
import { describeEachDb, type TestServer } from '../support/server.js';

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

async function connect(server: TestServer, key: string): Promise<Client> {
  const client = new Client({ name: 'list-media-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  open.push(client);
  // Listing first makes the SDK check each result against the tool's output schema.
  await client.listTools();
  return client;
}

describeEachDb('MCP list_media', (server) => {
  it('lists the workspace uploads with the same page as REST, and pages with the cursor', async () => {
    const ws = await server().workspace();
    const other = await server().workspace();
    for (const [w, n] of [
      [ws, 3],
      [other, 1],
    ] as const) {
      for (let i = 0; i < n; i++) {
        const up = await server().request('POST', `/api/v1/workspaces/${w.workspace_id}/media`, { key: w.api_key, rawBody: 'p'.repeat(50 + i), headers: { 'content-type': 'image/png' } });
        expect(up.status).toBe(201);
      }
    }
    const client = await connect(server(), ws.api_key);
    const tools = await client.listTools();
    expect(tools.tools.find((t) => t.name === 'list_media')?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });

    const first = (await client.callTool({ name: 'list_media', arguments: { limit: 2 } })) as CallToolResult;
    expect(first.isError ?? false).toBe(false);
    const page = first.structuredContent as { data: { id: string; size_bytes: number; used_by: unknown[] }[]; next_cursor: string | null };
    expect(page.data).toHaveLength(2);
    expect(page.next_cursor).not.toBeNull();
    const rest = await server().request<{ data: { id: string }[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/media`, { key: ws.api_key });
    const second = (await client.callTool({ name: 'list_media', arguments: { limit: 2, cursor: page.next_cursor } })) as CallToolResult;
    const rest2 = second.structuredContent as { data: { id: string }[]; next_cursor: string | null };
    expect([...page.data, ...rest2.data].map((m) => m.id)).toEqual(rest.body.data.map((m) => m.id));
    expect(rest2.next_cursor).toBeNull();

    const bad = (await client.callTool({ name: 'list_media', arguments: { cursor: 'garbage' } })) as CallToolResult;
    expect(bad.isError).toBe(true);
    const text = bad.content[0];
    expect(JSON.parse(text?.type === 'text' ? text.text : '{}')).toMatchObject({ error: 'validation_failed' });
  });
});
