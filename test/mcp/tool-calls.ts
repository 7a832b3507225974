import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, expect } from 'vitest';
import { tools } from '../../tools/index.js';
import { createMediaService } from '../../src/core/media/media.service.js';
import { createPublicMediaLinks } from '../../src/core/media/public-links.js';
import { createLocalMediaStore } from '../../src/media/local-store.js';
import { guardedMediaFetcher } from '../../src/media/probe.js';
import type { ApiResponse, TestServer } from '../support/server.js';

/**
 * Calls tools the way a real client does (the official SDK v1 client over Streamable HTTP, tools listed first so
 * it checks output schemas) and reads results by block type: `content[0]` is the JSON, a later text block the
 * tool's summary, `resource_link` blocks its links, whichever of those the server sends.
 */

const open: Client[] = [];

/** Closes every client a test opened; call once per test file. */
export function closeClientsAfterEach(): void {
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });
}

/** An SDK client on `/mcp` with `key` as bearer, tools already listed. */
export async function connect(server: TestServer, key: string): Promise<Client> {
  const client = new Client({ name: 'mcp-tools-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  open.push(client);
  await client.listTools();
  return client;
}

function textOf(block: CallToolResult['content'][number] | undefined): string {
  return block?.type === 'text' ? block.text : '';
}

/**
 * A successful call: its JSON text equals its structured content, which is returned. When the server adds the
 * summary text or resource links, they must be the tool's own (`summary`, `links`).
 */
export async function call<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError ?? false, `${name}: ${textOf(result.content[0])}`).toBe(false);
  expect(JSON.parse(textOf(result.content[0])) as unknown).toEqual(result.structuredContent);
  const tool = tools.find((t) => t.name === name)!;
  const value = tool.outputSchema.parse(result.structuredContent);
  const summaries = result.content.slice(1).filter((b) => b.type === 'text');
  if (summaries.length > 0) expect(summaries.map(textOf)).toEqual([tool.summary(value)]);
  const links = result.content.filter((b) => b.type === 'resource_link');
  if (links.length > 0) {
    const paths = links.map((l) => (l.type === 'resource_link' ? `${new URL(l.uri).pathname}${new URL(l.uri).hash}` : ''));
    expect(paths).toEqual((tool.links?.(value) ?? []).map((l) => l.path));
  }
  return result.structuredContent as T;
}

/**
 * A call expected to fail, through `client.callTool` as every real client makes it: an isError result without
 * structured content or links whose first text is the REST error body, returned parsed.
 */
export async function callFailing(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, `${name} failed`).toBe(true);
  expect(result.structuredContent, name).toBeUndefined();
  expect(result.content.filter((b) => b.type === 'resource_link')).toEqual([]);
  return JSON.parse(textOf(result.content[0])) as Record<string, unknown>;
}

/** An error body without its request id, which differs per request: what two doors must agree on. */
export function withoutRequestId(body: unknown): Record<string, unknown> {
  const { request_id: id, ...rest } = body as Record<string, unknown>;
  expect(id, 'the body names its request').toMatch(/^req_/);
  return rest;
}

/** The REST answer's error body, for comparing with a tool's. */
export function restError(res: ApiResponse): Record<string, unknown> {
  expect(res.status).toBeGreaterThanOrEqual(400);
  return withoutRequestId(res.body);
}

/**
 * Replaces the server's media service with one on the same database, meters, store and links that reads
 * addresses under the ALLOW_LOCAL_URLS policy, so import_media_from_url can reach a loopback test host (the
 * container gives the service the public-only guard), optionally with a shorter deadline.
 */
export function mediaOnLoopback(s: TestServer, importDeadlineMs?: number): void {
  const c = s.container;
  c.services.media = createMediaService({
    db: c.db.kysely,
    clock: c.clock,
    meters: c.services.meters,
    store: createLocalMediaStore(c.config.mediaDir),
    links: createPublicMediaLinks({ secretKey: c.secretKey, baseUrl: c.config.baseUrl ?? '', clock: c.clock, ttlMs: 24 * 3_600_000 }),
    fetcher: guardedMediaFetcher({ allowLocal: true }),
    ...(importDeadlineMs === undefined ? {} : { importDeadlineMs }),
  });
}
