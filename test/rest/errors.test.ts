import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { errorBodySchemas, ServiceError } from '../../src/core/errors.js';
import { describeEachDb, startTestServer } from '../support/server.js';
import { testDatabaseKinds } from '../support/databases.js';
import type { ApiResponse } from '../support/server.js';

/** Spec 7.1: exactly {error, message, request_id} (+ the row's fields) and request_id equal to the header. */
function expectErrorBody(res: ApiResponse, status: number, code: string, extraKeys: string[] = []): void {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(Object.keys(res.body).sort()).toEqual(['error', 'message', 'request_id', ...extraKeys].sort());
  expect(res.body.error).toBe(code);
  expect(typeof res.body.message).toBe('string');
  expect((res.body.message as string).length).toBeGreaterThan(0);
  expect(res.body.request_id).toBe(res.headers.get('x-request-id'));
}

describeEachDb('authentication', (server) => {
  const path = (ws: string) => `/api/v1/workspaces/${ws}/api-keys`;

  it('401 invalid_api_key when the key is missing', async () => {
    const ws = await server().workspace();
    expectErrorBody(await server().request('GET', path(ws.workspace_id)), 401, 'invalid_api_key');
  });

  it('401 invalid_api_key for malformed credentials', async () => {
    const ws = await server().workspace();
    for (const authorization of ['Bearer', 'Bearer not-a-key', `Basic ${ws.api_key}`, `Bearer ${ws.api_key}x`, `Bearer ${ws.api_key.toUpperCase()}`, ws.api_key]) {
      const res = await server().request('GET', path(ws.workspace_id), { headers: { authorization } });
      expectErrorBody(res, 401, 'invalid_api_key');
    }
  });

  it('401 invalid_api_key for an unknown key of the right shape', async () => {
    const ws = await server().workspace();
    const res = await server().request('GET', path(ws.workspace_id), { key: `svc_live_${'0'.repeat(32)}` });
    expectErrorBody(res, 401, 'invalid_api_key');
  });

  it('401 invalid_api_key for a revoked key', async () => {
    const ws = await server().workspace();
    await server().request('DELETE', `${path(ws.workspace_id)}/${ws.key_id}`, { key: ws.api_key });
    expectErrorBody(await server().request('GET', path(ws.workspace_id), { key: ws.api_key }), 401, 'invalid_api_key');
  });

  it('accepts the bearer scheme in any case', async () => {
    const ws = await server().workspace();
    const res = await server().request('GET', path(ws.workspace_id), { headers: { authorization: `bearer ${ws.api_key}` } });
    expect(res.status).toBe(200);
  });

  it('403 forbidden on another workspace\'s path, existing or not, before any validation', async () => {
    const mine = await server().workspace('mine');
    const theirs = await server().workspace('theirs');
    expectErrorBody(await server().request('GET', path(theirs.workspace_id), { key: mine.api_key }), 403, 'forbidden');
    expectErrorBody(await server().request('GET', path('ws_doesnotexist'), { key: mine.api_key }), 403, 'forbidden');
    const write = await server().request('POST', path(theirs.workspace_id), { key: mine.api_key, body: { nope: true } });
    expectErrorBody(write, 403, 'forbidden');
    const del = await server().request('DELETE', `${path(theirs.workspace_id)}/${theirs.key_id}`, { key: mine.api_key });
    expectErrorBody(del, 403, 'forbidden');
    // Their key is untouched.
    expect((await server().request('GET', path(theirs.workspace_id), { key: theirs.api_key })).status).toBe(200);
  });
});

describeEachDb('error format', (server) => {
  const path = (ws: string) => `/api/v1/workspaces/${ws}/api-keys`;

  it('400 invalid_request for malformed JSON', async () => {
    const ws = await server().workspace();
    const res = await server().request('POST', path(ws.workspace_id), {
      key: ws.api_key,
      rawBody: '{"name": "x",',
      headers: { 'content-type': 'application/json' },
    });
    expectErrorBody(res, 400, 'invalid_request');
  });

  it('400 invalid_request for a body that is not application/json, or no body at all', async () => {
    const ws = await server().workspace();
    const form = await server().request('POST', path(ws.workspace_id), {
      key: ws.api_key,
      rawBody: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectErrorBody(form, 400, 'invalid_request');
    expect(form.body.message).toMatch(/Content-Type/);
    const none = await server().request('POST', path(ws.workspace_id), { key: ws.api_key });
    expectErrorBody(none, 400, 'invalid_request');
  });

  it('400 validation_failed naming the field path', async () => {
    const ws = await server().workspace();
    const wrongType = await server().request('POST', path(ws.workspace_id), { key: ws.api_key, body: { name: 42 } });
    expectErrorBody(wrongType, 400, 'validation_failed', ['fields']);
    expect(wrongType.body.message).toBe('name must be a string');

    const unknownField = await server().request('POST', path(ws.workspace_id), { key: ws.api_key, body: { name: 'x', revoke_other: true } });
    expectErrorBody(unknownField, 400, 'validation_failed', ['fields']);
    expect(unknownField.body.message).toContain('revoke_other');

    const notObject = await server().request('POST', path(ws.workspace_id), { key: ws.api_key, body: ['x'] });
    expectErrorBody(notObject, 400, 'validation_failed', ['fields']);
  });

  it('renders nested paths with indexes, as in target_platforms[0]', async () => {
    const { formatIssuePath } = await import('../../src/core/errors.js');
    expect(formatIssuePath(['target_platforms', 0])).toBe('target_platforms[0]');
    expect(formatIssuePath(['media', 2, 'url'])).toBe('media[2].url');
  });

  it('404 not_found for an unknown route, with or without credentials', async () => {
    const ws = await server().workspace();
    expectErrorBody(await server().request('GET', '/api/v1/nothing-here', { unchecked: true }), 404, 'not_found');
    expectErrorBody(await server().request('GET', '/api/v1/nothing-here', { key: ws.api_key, unchecked: true }), 404, 'not_found');
    expectErrorBody(await server().request('PUT', path(ws.workspace_id), { key: ws.api_key, unchecked: true }), 404, 'not_found');
  });

  it('413 payload_too_large past the body limit', async () => {
    const ws = await server().workspace();
    const res = await server().request('POST', path(ws.workspace_id), { key: ws.api_key, body: { name: 'x'.repeat(2 * 1024 * 1024) } });
    expectErrorBody(res, 413, 'payload_too_large');
  });

  it('keeps a well-formed incoming X-Request-Id and replaces a bad one', async () => {
    const kept = await server().request('GET', '/api/v1/nothing', { headers: { 'x-request-id': 'client-trace-0001' }, unchecked: true });
    expect(kept.headers.get('x-request-id')).toBe('client-trace-0001');
    expect(kept.body.request_id).toBe('client-trace-0001');
    const replaced = await server().request('GET', '/api/v1/nothing', { headers: { 'x-request-id': 'bad id\twith spaces' }, unchecked: true });
    expect(replaced.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('puts X-Request-Id on successful responses too', async () => {
    const res = await server().request('GET', '/healthz');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(res.body).toEqual({ status: 'ok' });
  });
});

for (const kind of testDatabaseKinds()) {
  it(`500 server_error without internals when the database fails [${kind.name}]`, async () => {
    const server = await startTestServer(kind);
    try {
      const ws = await server.workspace();
      // CASCADE on PostgreSQL: dashboard sessions reference the keys.
      await sql.raw(server.database.dialect === 'postgres' ? 'drop table api_keys cascade' : 'drop table api_keys').execute(server.container.db.kysely);
      const res = await server.request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key });
      expectErrorBody(res, 500, 'server_error');
      expect(res.text).not.toMatch(/api_keys|sqlite|relation|stack|at /i);
      const ready = await server.request('GET', '/readyz');
      expect(ready.status).toBe(200);
    } finally {
      await server.stop();
    }
  });
}

describe('one error body for every door', () => {
  it('toBody is {error, message, request_id, ...extra}; the MCP door sends the same JSON as its text', async () => {
    const { toolFailure } = await import('../../src/mcp/tool-result.js');
    const { createLogger } = await import('../../src/observability/logger.js');
    const err = new ServiceError('limit_reached', 'full', { meter: 'brands', limit: 1, used: 1, resolve: 'desativar_outra' });
    const body = err.toBody('req_1');
    expect(body).toEqual({ error: 'limit_reached', message: 'full', request_id: 'req_1', meter: 'brands', limit: 1, used: 1, resolve: 'desativar_outra' });
    expect(errorBodySchemas.limit_reached.parse(body)).toEqual(body);
    const result = toolFailure(err, 'req_1', createLogger('silent'));
    expect(JSON.parse(result.content[0]?.type === 'text' ? result.content[0].text : 'null')).toEqual(body);
  });
});
