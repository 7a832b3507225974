import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, expect, it } from 'vitest';
import { tools } from '../../tools/index.js';
import { ManualClock } from '../../src/core/clock.js';
import type { ErrorCode } from '../../src/core/errors.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';

/**
 * Third-party MCP clients against the real server: the official SDK v1 client and the MCP Inspector CLI. Both
 * validate `structuredContent` against a tool's `outputSchema` even on `isError` results (typescript-sdk#1943),
 * so an error result that carries the error body as structured content turns every failing call into a client
 * exception. Every tool is called here with an input that fails, through `client.callTool`, never around it.
 */

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

/** An SDK client on `/mcp`; tools are listed first, as real clients do, so `callTool` checks output schemas. */
async function connect(server: TestServer, key: string): Promise<Client> {
  const client = new Client({ name: 'third-party', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  open.push(client);
  await client.listTools();
  return client;
}

/** The error body a client shows: the JSON text of the first content item (the only place an error carries it). */
function errorBody(result: CallToolResult): Record<string, unknown> {
  const first = result.content[0];
  expect(first?.type).toBe('text');
  return JSON.parse(first?.type === 'text' ? first.text : 'null') as Record<string, unknown>;
}

const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

/**
 * One failing call per tool, with the code it must answer. Keyed by tool name: a tool added to the registry
 * without a row here fails the coverage test below.
 */
function failingCalls(brandId: string): Record<string, { args: Record<string, unknown>; error: ErrorCode }> {
  const text = { target_platforms: ['threads'], content_type: 'text', text: 'Hello.' };
  return {
    publish_content: { args: { brand_id: 'brand_unknown', ...text }, error: 'not_found' },
    preview_content: { args: { brand_id: brandId, ...text, text: 'x'.repeat(501) }, error: 'caption_too_long' },
    update_content: { args: { content_id: UNKNOWN_UUID, text: 'Edited.' }, error: 'not_found' },
    cancel_content: { args: { content_id: UNKNOWN_UUID }, error: 'not_found' },
    publish_content_now: { args: { content_id: UNKNOWN_UUID }, error: 'not_found' },
    retry_failed_targets: { args: { content_id: UNKNOWN_UUID }, error: 'not_found' },
    submit_for_approval: { args: { content_id: UNKNOWN_UUID }, error: 'not_found' },
    list_pending_approvals: { args: { limit: 0 }, error: 'validation_failed' },
    approve_content: { args: { content_id: UNKNOWN_UUID }, error: 'not_found' },
    request_changes: { args: { content_id: UNKNOWN_UUID, comment: 'Say which day.' }, error: 'not_found' },
    get_content: { args: { content_id: UNKNOWN_UUID }, error: 'not_found' },
    list_contents: { args: { limit: 0 }, error: 'validation_failed' },
    list_platforms: { args: { unexpected: true }, error: 'validation_failed' },
    list_brands: { args: { unexpected: true }, error: 'validation_failed' },
    get_queue: { args: { brand_id: 'brand_unknown' }, error: 'not_found' },
    set_queue: { args: { brand_id: 'brand_unknown', time_zone: 'Mars/Olympus', slots: [] }, error: 'validation_failed' },
    list_connections: { args: { status: 'sleeping' }, error: 'validation_failed' },
    start_connection_oauth: { args: { connection_id: 'conn_unknown' }, error: 'not_found' },
    list_publish_targets: { args: { connection_id: 'conn_unknown' }, error: 'not_found' },
    choose_publish_target: { args: { connection_id: 'conn_unknown', target_id: '' }, error: 'validation_failed' },
    create_webhook: { args: { url: 'not a url', enabled_events: ['content.published'] }, error: 'validation_failed' },
    list_webhooks: { args: { unexpected: true }, error: 'validation_failed' },
    list_deliveries: { args: { webhook_id: 'wh_unknown' }, error: 'not_found' },
    list_media: { args: { cursor: 'garbage' }, error: 'validation_failed' },
    redeliver_delivery: { args: { delivery_id: 'del_unknown' }, error: 'not_found' },
    verify_webhook_signature: { args: { secret: '' }, error: 'validation_failed' },
    get_usage: { args: { unexpected: true }, error: 'validation_failed' },
    get_wallet: { args: { limit: 0 }, error: 'validation_failed' },
    get_wallet_price: { args: { operacao: 'teleport' }, error: 'operacao_sem_preco' },
    list_wallet_offers: { args: { unexpected: true }, error: 'validation_failed' },
    get_audit_log: { args: { cursor: 'garbage' }, error: 'validation_failed' },
    create_brand: { args: { name: ' ' }, error: 'validation_failed' },
    update_brand: { args: { brand_id: 'brand_unknown', name: 'Renamed' }, error: 'not_found' },
    add_sandbox_connection: { args: { brand_id: 'brand_unknown', platform_slug: 'threads', mode: 'sandbox', name: '@x' }, error: 'not_found' },
    import_media_from_url: { args: { url: 'not a url' }, error: 'validation_failed' },
    update_webhook: { args: { webhook_id: 'wh_unknown', active: false }, error: 'not_found' },
    delete_webhook: { args: { webhook_id: 'wh_unknown' }, error: 'not_found' },
    send_webhook_test: { args: { webhook_id: 'wh_unknown' }, error: 'not_found' },
  };
}

/** Runs the Inspector's CLI (`mcp-inspector --cli`, the entry `@modelcontextprotocol/inspector` v1 ships) to its end. */
function inspector(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const bin = createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/build/cli.js');
  return new Promise((resolve, reject) => {
    // The CLI picks the package.json it names itself after by testing `../package.json` against the working
    // directory but importing it relative to its module; started from its own build folder, both agree.
    const child = spawn(process.execPath, [bin, '--cli', ...args], { cwd: dirname(bin), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describeEachDb(
  'MCP with third-party clients',
  (server) => {
    it('the failing-call table covers every tool of the registry', () => {
      expect(Object.keys(failingCalls('brand_x')).sort()).toEqual(tools.map((t) => t.name).sort());
    });

    it('SDK client: every tool called with a failing input returns an isError result carrying our error code', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const client = await connect(server(), ws.api_key);
      for (const [name, { args, error }] of Object.entries(failingCalls(brandId))) {
        // callTool, not a raw request: this is the path that throws -32602 when an error carries structuredContent.
        const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
        expect(result.isError, name).toBe(true);
        expect(result.structuredContent, name).toBeUndefined();
        expect(errorBody(result), name).toMatchObject({ error, message: expect.any(String), request_id: expect.stringMatching(/^req_/) });
      }
    });

    it('SDK client: an unknown tool is a JSON-RPC error whose message has the MCP prefix once', async () => {
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const failure = await client.callTool({ name: 'no_such_tool', arguments: {} }).then(
        () => new Error('resolved'),
        (err: unknown) => err as Error,
      );
      expect(failure.message).toBe('MCP error -32602: Tool no_such_tool not found');
    });

    it('MCP Inspector CLI: lists the tools, calls one, and shows a failing call as an isError result with our error', async () => {
      const ws = await server().workspace();
      const common = [`${server().url}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${ws.api_key}`];

      const listed = await inspector([...common, '--method', 'tools/list']);
      expect(listed.code, listed.stderr).toBe(0);
      const names = (JSON.parse(listed.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name);
      expect(names.sort()).toEqual(tools.map((t) => t.name).sort());

      const ok = await inspector([...common, '--method', 'tools/call', '--tool-name', 'list_platforms']);
      expect(ok.code, ok.stderr).toBe(0);
      const platforms = JSON.parse(ok.stdout) as CallToolResult;
      expect(platforms.isError ?? false).toBe(false);
      expect((platforms.structuredContent as { data: { slug: string }[] }).data.map((p) => p.slug)).toContain('threads');

      const failed = await inspector([...common, '--method', 'tools/call', '--tool-name', 'get_content', '--tool-arg', `content_id=${UNKNOWN_UUID}`]);
      expect(failed.code, failed.stderr).toBe(0);
      const result = JSON.parse(failed.stdout) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(errorBody(result)).toMatchObject({ error: 'not_found', request_id: expect.stringMatching(/^req_/) });
    }, 60_000);
  },
  {},
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
