import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../src/observability/logger.js';
import { testDatabaseKinds } from './support/databases.js';
import { startTestServer, type TestServer } from './support/server.js';

const lines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    lines.push(...chunk.toString().split('\n').filter((l) => l.length > 0));
    done();
  },
});
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(testDatabaseKinds()[0]!, {}, { logger: createLogger('debug', sink) });
});
afterAll(() => server.stop());

it('logs one JSON line per request with its request id, and never a credential', async () => {
  const ws = await server.workspace();
  const created = await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, {
    key: ws.api_key,
    body: { name: 'logged' },
    headers: { 'x-request-id': 'trace-logging-1' },
  });
  await server.request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: `svc_live_${'a'.repeat(32)}` });
  await new Promise((r) => setTimeout(r, 50));

  const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  const requestLines = parsed.filter((l) => l.msg === 'request');
  expect(requestLines.length).toBeGreaterThanOrEqual(2);
  for (const l of requestLines) expect(typeof l.request_id).toBe('string');
  expect(requestLines.some((l) => l.request_id === 'trace-logging-1' && l.status === 201)).toBe(true);

  const all = lines.join('\n');
  expect(all).not.toContain(ws.api_key);
  expect(all).not.toContain(created.body.api_key as string);
  expect(all).not.toContain('a'.repeat(32));
});

it('redacts credential fields wherever a log call passes them', () => {
  const captured: string[] = [];
  const logger = createLogger('info', new Writable({ write: (c: Buffer, _e, d) => (captured.push(c.toString()), d()) }));
  logger.info({ api_key: 'svc_live_x', body: { secret: 'whsec_x', client_secret: 'mcp_csec_x' }, headers: { authorization: 'Bearer y' } }, 'call');
  expect(captured.join('')).not.toMatch(/svc_live_x|whsec_x|mcp_csec_x|Bearer y/);
});
