import {
  type AuthInfo,
  classifyInboundRequest,
  createMcpHandler,
  type JSONRPCRequest,
} from '@modelcontextprotocol/server';
import { expect, it } from 'vitest';
import { answerDirectCall, directCallOf } from '../../src/mcp/direct-call.js';
import { exchangeOnce } from '../../src/mcp/json-exchange.js';
import { buildMcpServer, type McpScope } from '../../src/mcp/server.js';
import { createLogger } from '../../src/observability/logger.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';

/**
 * The direct `tools/call` path (`src/mcp/direct-call.ts`) against the SDK it stands in for: each request below
 * is answered both ways, in process, with the same scope, and the two answers must be the same bytes with the
 * same content type. Requests the direct path must leave to the SDK are checked to be left.
 */

const BASE = 'https://publisher.example';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'direct-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const ACCEPT = 'application/json, text/event-stream';

interface Case {
  body: JSONRPCRequest;
  headers: Record<string, string>;
}

function legacy(id: string | number, name: string, args: unknown, version: string | undefined, extra: Record<string, unknown> = {}): Case {
  return {
    body: { jsonrpc: '2.0', id, method: 'tools/call', params: { name, ...(args !== undefined && { arguments: args }), ...extra } } as JSONRPCRequest,
    headers: { 'content-type': 'application/json', accept: ACCEPT, ...(version !== undefined && { 'mcp-protocol-version': version }) },
  };
}

function modern(id: string | number, name: string, args: unknown, headers: Record<string, string> = {}): Case {
  return {
    body: { jsonrpc: '2.0', id, method: 'tools/call', params: { name, ...(args !== undefined && { arguments: args }), _meta: ENVELOPE } } as JSONRPCRequest,
    headers: { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name, ...headers },
  };
}

function route(c: Case) {
  return classifyInboundRequest({
    httpMethod: 'POST',
    body: c.body,
    ...(c.headers['mcp-protocol-version'] !== undefined && { protocolVersionHeader: c.headers['mcp-protocol-version'] }),
    ...(c.headers['mcp-method'] !== undefined && { mcpMethodHeader: c.headers['mcp-method'] }),
    ...(c.headers['mcp-name'] !== undefined && { mcpNameHeader: c.headers['mcp-name'] }),
  });
}

async function scopeFor(server: TestServer, key: string, version: string | undefined): Promise<McpScope> {
  const principal = await server.container.services.apiKeys.authenticate(key);
  return {
    principal: async () => principal,
    services: server.container.services,
    log: createLogger('silent'),
    requestId: () => 'req_direct_test',
    baseUrl: BASE,
    ...(version !== undefined && { protocolVersion: version }),
  };
}

/** The answer of the SDK path the door used before: the one-exchange transport (2025 era) or the SDK's modern handler. */
async function viaSdk(c: Case, scope: McpScope): Promise<{ contentType: string; body: string }> {
  if (route(c).kind === 'legacy') {
    // Express's res.json: JSON.stringify, and this content type.
    return { contentType: 'application/json; charset=utf-8', body: JSON.stringify(await exchangeOnce(buildMcpServer(scope), c.body)) };
  }
  const authInfo: AuthInfo = { token: '', clientId: 'direct-test', scopes: [] };
  const handler = createMcpHandler(() => buildMcpServer(scope), { legacy: 'reject' });
  const response = await handler.fetch(new Request(`${BASE}/mcp`, { method: 'POST', headers: c.headers }), { authInfo, parsedBody: c.body });
  return { contentType: response.headers.get('content-type') ?? '', body: await response.text() };
}

async function viaDirect(c: Case, scope: McpScope): Promise<{ contentType: string; body: string } | undefined> {
  const call = directCallOf(c.body, (name) => c.headers[name], () => route(c));
  return call === undefined ? undefined : answerDirectCall(call, scope);
}

describeEachDb('MCP tools/call: the direct path answers as the SDK does', (server) => {
  it('gives the same bytes as the SDK for successes, summaries, links, validation and core errors, in every revision', async () => {
    const { ws, brandId } = await brandWithConnections(server(), ['threads']);
    const created = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
      key: ws.api_key,
      body: { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'Same answer both ways.', draft: true },
    });
    expect(created.status).toBe(201);
    const contentId = created.body.content_id as string;

    const cases: Case[] = [];
    for (const version of [undefined, '2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']) {
      cases.push(
        legacy(1, 'get_content', { content_id: contentId }, version),
        legacy('a-string-id', 'list_brands', {}, version),
        legacy(2, 'list_brands', undefined, version),
        legacy(3, 'get_content', { content_id: 5 }, version),
        legacy(4, 'get_content', { content_id: 'cnt_missing' }, version),
        legacy(5, 'get_content', { content_id: contentId, unknown_field: true }, version),
        legacy(6, 'preview_content', { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'x'.repeat(600) }, version),
      );
    }
    cases.push(legacy(7, 'get_content', { content_id: contentId }, '2025-11-25', { _meta: { progressToken: 9 } }));
    cases.push(legacy(Number.MAX_SAFE_INTEGER, 'list_brands', {}, '2025-11-25'), legacy('', 'list_brands', {}, '2025-11-25'), legacy(-3, 'list_brands', {}, '2025-11-25'));
    cases.push(
      modern(1, 'get_content', { content_id: contentId }),
      modern('b', 'list_brands', undefined),
      modern(3, 'get_content', { content_id: 5 }),
      modern(4, 'get_content', { content_id: 'cnt_missing' }),
      modern(6, 'preview_content', { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'x'.repeat(600) }),
      modern(8, 'list_brands', {}, { accept: 'text/event-stream, application/json;q=0.9' }),
      {
        ...modern(9, 'list_brands', {}),
        body: { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'list_brands', _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': { name: 'x', version: '2', title: 'X' } } } },
      },
    );

    for (const c of cases) {
      const scope = await scopeFor(server(), ws.api_key, c.headers['mcp-protocol-version']);
      const direct = await viaDirect(c, scope);
      expect(direct, JSON.stringify(c)).toBeDefined();
      expect(direct, JSON.stringify(c)).toEqual(await viaSdk(c, scope));
    }
    // The cases reach every kind of answer: a value with links, a summary, a validation failure, a core error.
    const bodies = await Promise.all(cases.map(async (c) => (await viaDirect(c, await scopeFor(server(), ws.api_key, c.headers['mcp-protocol-version'])))!.body));
    expect(bodies.some((b) => b.includes('"resource_link"'))).toBe(true);
    expect(bodies.some((b) => b.includes('validation_failed'))).toBe(true);
    expect(bodies.some((b) => b.includes('not_found'))).toBe(true);
    expect(bodies.some((b) => b.includes('"resultType":"complete"'))).toBe(true);
  });

  it('leaves to the SDK every request it would answer otherwise', async () => {
    const ws = await server().workspace();
    const scope = await scopeFor(server(), ws.api_key, '2025-11-25');
    const ok = legacy(1, 'list_brands', {}, '2025-11-25');
    const okModern = modern(1, 'list_brands', {});
    expect(await viaDirect(ok, scope)).toBeDefined();
    expect(await viaDirect(okModern, scope)).toBeDefined();

    const left: Case[] = [
      legacy(1, 'no_such_tool', {}, '2025-11-25'),
      legacy(1, 'list_brands', [], '2025-11-25'),
      legacy(1, 'list_brands', 'text', '2025-11-25'),
      legacy(1, 'list_brands', {}, '2025-11-25', { task: { ttl: 1000 } }),
      legacy(1, 'list_brands', {}, '1999-01-01'),
      { ...ok, headers: { ...ok.headers, accept: 'application/json' } },
      { ...ok, headers: { ...ok.headers, 'content-type': 'text/plain' } },
      { ...ok, body: { ...ok.body, method: 'tools/list' } },
      modern(1, 'no_such_tool', {}),
      modern(1, 'list_brands', {}, { 'mcp-name': 'get_content' }),
      modern(1, 'list_brands', {}, { 'mcp-method': 'tools/list' }),
      modern(1, 'list_brands', {}, { 'mcp-protocol-version': '2025-11-25' }),
      { ...okModern, headers: Object.fromEntries(Object.entries(okModern.headers).filter(([name]) => name !== 'mcp-method')) },
      { ...okModern, headers: Object.fromEntries(Object.entries(okModern.headers).filter(([name]) => name !== 'mcp-name')) },
      {
        ...okModern,
        body: { ...okModern.body, params: { name: 'list_brands', _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2027-01-01' } } },
        headers: { ...okModern.headers, 'mcp-protocol-version': '2027-01-01' },
      },
      { ...okModern, body: { ...okModern.body, params: { name: 'list_brands', _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': 'nope' } } } },
    ];
    for (const c of left) expect(await viaDirect(c, scope), JSON.stringify(c)).toBeUndefined();

    // Near misses of the shape the classifier is skipped for: each is either left to the SDK or answered as it would.
    const near: Case[] = [
      { ...ok, body: { ...ok.body, id: 1.5 } },
      { ...ok, body: { ...ok.body, id: null } as unknown as JSONRPCRequest },
      { ...ok, body: { ...ok.body, jsonrpc: '1.0' } as unknown as JSONRPCRequest },
      { ...ok, body: { ...ok.body, extra: true } as unknown as JSONRPCRequest },
      { ...ok, body: { ...ok.body, result: {} } as unknown as JSONRPCRequest },
      legacy(1, 'list_brands', {}, '2025-11-25', { _meta: { progressToken: {} } }),
      legacy(1, 'list_brands', {}, '2025-11-25', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } }),
      legacy(1, 'list_brands', {}, '2026-07-28'),
      { ...okModern, body: { ...okModern.body, id: 2.5 } },
      { ...okModern, body: { ...okModern.body, params: { name: 'list_brands', _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': { name: 'x' } } } } },
      { ...okModern, body: { ...okModern.body, params: { name: 'list_brands', _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': { name: 'x', version: '1', title: 7 } } } } },
      { ...okModern, body: { ...okModern.body, params: { name: 'list_brands', _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': { roots: { listChanged: true } } } } } },
      { ...okModern, body: { ...okModern.body, params: { name: 'list_brands', _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': { roots: 'yes' } } } } },
      { ...okModern, body: { ...okModern.body, params: { name: 'list_brands', _meta: { ...ENVELOPE, 'io.modelcontextprotocol/logLevel': 'debug' } } } },
      { ...okModern, body: { ...okModern.body, params: { name: 'list_brands', _meta: { ...ENVELOPE, progressToken: {} } } } as unknown as JSONRPCRequest },
      { ...okModern, headers: { ...okModern.headers, 'mcp-name': ' list_brands' } },
      { ...okModern, headers: { ...okModern.headers, 'mcp-protocol-version': ' 2026-07-28' } },
    ];
    for (const c of near) {
      const direct = await viaDirect(c, scope);
      if (direct !== undefined) expect(direct, JSON.stringify(c)).toEqual(await viaSdk(c, scope));
    }
    expect(await viaDirect(near[0]!, scope)).toBeUndefined();
    expect(await viaDirect(near[3]!, scope)).toBeUndefined();
  });
});
