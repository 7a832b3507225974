import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Agent, fetch as fetchOnce } from 'undici';
import { expect, it } from 'vitest';
import { restRoutes } from '../../src/app.js';
import { ERROR_CODES, errorCatalogue } from '../../src/core/errors.js';
import { documentOperations, type JsonSchema } from '../support/openapi.js';
import { describeEachDb } from '../support/server.js';

const run = promisify(execFile);

interface Media {
  schema?: JsonSchema;
  example?: unknown;
}

/** The operations whose examples are written by hand next to their route: a generated one would not do. */
const HAND_WRITTEN = ['createContent', 'listContents', 'getContent', 'createBrand', 'listBrands', 'getBrand', 'createSandboxConnection', 'listConnections', 'createWebhook', 'listWebhooks', 'createApiKey', 'listApiKeys', 'setBrandQueue', 'getBrandQueue', 'uploadMedia'];

/** Operations whose only answers are fixed by what they are, which the lint rules turned off in redocly.yaml would flag. */
const NO_4XX = ['GET /openapi.yaml', 'GET /.well-known/oauth-authorization-server/api/oauth/mcp', 'GET /.well-known/oauth-protected-resource/mcp'];
const NO_2XX = ['GET /api/oauth/mcp/authorize'];

describeEachDb('OpenAPI document', (server) => {
  it('is served at /openapi.yaml and is a valid OpenAPI 3.1 document', async () => {
    const res = await fetch(`${server().url}/openapi.yaml`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/yaml/);
    const validator = new Validator();
    const result = await validator.validate(await res.text());
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('documents every mounted route with its security and error responses', async () => {
    const { doc } = await server().openapi();
    for (const route of restRoutes(server().container)) {
      const op = doc.paths[route.path]?.[route.method] as { security?: unknown[]; responses: Record<string, unknown> } | undefined;
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      expect(op?.responses[String(route.success.status)]).toBeDefined();
      expect(op?.responses['500']).toBeDefined();
      if (route.auth === 'bearer') {
        expect(op?.security).toEqual([{ bearerAuth: [] }]);
        for (const status of ['401', '429']) expect(op?.responses[status], `${route.path} ${status}`).toBeDefined();
      }
    }
  });

  it('the error catalogue gives every code of spec 7.2 its status', () => {
    const statuses = Object.fromEntries(ERROR_CODES.map((c) => [c, errorCatalogue[c].status]));
    expect(statuses).toMatchObject({
      validation_failed: 400,
      invalid_request: 400,
      invalid_api_key: 401,
      invalid_token: 401,
      forbidden: 403,
      limit_reached: 403,
      saldo_insuficiente: 402,
      saldo_fragmentado: 402,
      lote_vencido: 402,
      operacao_sem_preco: 402,
      not_found: 404,
      idempotency_conflict: 409,
      content_not_editable: 409,
      connections_required: 422,
      platform_not_supported: 422,
      media_too_large: 422,
      media_unsupported_format: 422,
      caption_too_long: 422,
      rate_limited: 429,
      server_error: 500,
    });
  });

  it("every error code's body is documented with the extra fields of spec 7.2 and nothing else", async () => {
    const { doc } = await server().openapi();
    const schemas = (doc.components as { schemas: Record<string, { properties: Record<string, unknown>; required: string[]; additionalProperties?: boolean }> }).schemas;
    const extras: Record<string, string[]> = {
      validation_failed: ['fields'],
      saldo_insuficiente: ['meter', 'modo', 'preco_unitario', 'custo_estimado', 'saldo_disponivel', 'recoverable'],
      saldo_fragmentado: ['meter', 'modo', 'custo_estimado', 'saldo_disponivel', 'maior_lote_disponivel', 'recoverable'],
      lote_vencido: ['lote_id', 'recoverable'],
      operacao_sem_preco: ['operacao'],
      limit_reached: ['meter', 'limit', 'used', 'resolve'],
      // Beyond spec 7.2: which permission a role or brand list lacks (absent for another workspace).
      forbidden: ['permission'],
      connections_required: ['connections'],
      platform_not_supported: ['platform_slug'],
      media_too_large: ['platform_slug', 'limit', 'fields'],
      media_unsupported_format: ['platform_slug', 'accepted', 'fields'],
      caption_too_long: ['platform_slug', 'limit', 'fields'],
      content_not_editable: ['status'],
      media_in_use: ['contents'],
    };
    for (const code of ERROR_CODES) {
      const name = `${code.replace(/(^|_)([a-z])/g, (_m, _s: string, c: string) => c.toUpperCase())}Error`;
      const schema = schemas[name];
      expect(schema, name).toBeDefined();
      expect(Object.keys(schema!.properties).sort(), code).toEqual(['error', 'message', 'request_id', ...(extras[code] ?? [])].sort());
      expect(schema!.additionalProperties, code).toBe(false);
    }
    // The refusals about one field always name its path, so a client can place them without reading the message.
    for (const name of ['MediaTooLargeError', 'CaptionTooLongError']) expect(schemas[name]!.required, name).toContain('fields');
    // A status shared by several codes offers each code's body, chosen by `error`.
    const created = doc.paths['/api/v1/workspaces/{wsId}/contents']?.post?.responses?.['403']?.content?.['application/json']?.schema as { oneOf: { $ref: string }[] };
    expect(created.oneOf.map((s) => s.$ref).sort()).toEqual(['#/components/schemas/ForbiddenError', '#/components/schemas/LimitReachedError']);
    // Issue 16: edit, cancel and publish-now answer 409 for a reused key and for a content that can no longer change.
    for (const [method, path] of [['patch', '/api/v1/workspaces/{wsId}/contents/{contentId}'], ['post', '/api/v1/workspaces/{wsId}/contents/{contentId}/cancel'], ['post', '/api/v1/workspaces/{wsId}/contents/{contentId}/publish']] as const) {
      const conflict = doc.paths[path]?.[method]?.responses?.['409']?.content?.['application/json']?.schema as { oneOf: { $ref: string }[] };
      expect(conflict.oneOf.map((s) => s.$ref).sort(), `${method} ${path}`).toEqual(['#/components/schemas/ContentNotEditableError', '#/components/schemas/IdempotencyConflictError']);
    }
  });

  it('the conformance check rejects what the document does not allow', async () => {
    const conformance = await server().openapi();
    const path = '/api/v1/workspaces/ws_x/api-keys';
    expect(conformance.check('GET', path, 200, { data: [] })).toEqual([]);
    expect(conformance.check('GET', path, 200, { data: [{ id: 1 }] }).length).toBeGreaterThan(0);
    expect(conformance.check('GET', path, 418, undefined).length).toBeGreaterThan(0);
    expect(conformance.check('PUT', path, 200, {}).length).toBeGreaterThan(0);
    expect(conformance.check('GET', path, 401, { error: 'invalid_api_key', message: 'x' }).length).toBeGreaterThan(0);
    // An error body carries exactly its code's fields: no other code at that status, no undeclared field.
    expect(conformance.check('GET', path, 401, { error: 'invalid_api_key', message: 'x', request_id: 'r' })).toEqual([]);
    expect(conformance.check('GET', path, 401, { error: 'invalid_api_key', message: 'x', request_id: 'r', meter: 'brands' }).length).toBeGreaterThan(0);
    expect(conformance.check('GET', path, 403, { error: 'limit_reached', message: 'x', request_id: 'r' }).length).toBeGreaterThan(0);
  });

  it('every request body and success answer has an example that its schema accepts; the main ones are written by hand', async () => {
    const conformance = await server().openapi();
    const problems: string[] = [];
    let checked = 0;
    for (const { key, method, path, operationId, doc: op } of documentOperations(conformance.doc)) {
      const body = (op.requestBody as { content?: Record<string, Media> } | undefined)?.content ?? {};
      for (const [type, media] of Object.entries(body)) {
        if (media.schema?.format === 'binary') continue;
        if (media.example === undefined) problems.push(`${key}: no example of its ${type} body`);
        else if (media.schema !== undefined) problems.push(...conformance.checkValue(media.schema, media.example, `${key} request example`));
        checked++;
      }
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const media = (response.content as Record<string, Media> | undefined)?.['application/json'];
        if (!status.startsWith('2') || media === undefined) continue;
        if (media.example === undefined) problems.push(`${key} ${status}: no example`);
        else problems.push(...conformance.check(method, path, Number(status), media.example));
        checked++;
      }
      if (HAND_WRITTEN.includes(operationId)) {
        const route = restRoutes(server().container).find((r) => r.operationId === operationId);
        expect(route?.example?.response, operationId).toBeDefined();
        const success = op.responses?.[String(route?.success.status)]?.content?.['application/json'] as Media | undefined;
        expect(success?.example, operationId).toEqual(route?.example?.response);
        if (route?.body !== undefined) expect((body['application/json'] as Media | undefined)?.example, operationId).toEqual(route.example?.request);
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(60);
  });

  it('an example that breaks its schema is caught', async () => {
    const conformance = await server().openapi();
    const brand = conformance.doc.paths['/api/v1/workspaces/{wsId}/brands']?.post?.requestBody?.content?.['application/json']?.schema;
    expect(brand).toBeDefined();
    expect(conformance.checkValue(brand!, { name: 'Corner Bakery' }, 'brand')).toEqual([]);
    expect(conformance.checkValue(brand!, { name: 'Corner Bakery', colour: 'red' }, 'brand').length).toBeGreaterThan(0);
    expect(conformance.check('POST', '/api/v1/workspaces/{wsId}/api-keys', 201, { id: 'key_x', api_key: 'svc_live_x', name: 'n', prefix: 'svc_live', created_at: '2026-01-01T00:00:00Z', revoked_other_keys: 0 }).length).toBeGreaterThan(0);
  });

  it('documents the RFC 7009 form body of the revocation endpoint, and a real form revocation conforms to it', async () => {
    const conformance = await server().openapi();
    const body = conformance.doc.paths['/api/oauth/mcp/revoke']?.post?.requestBody?.content;
    const form = body?.['application/x-www-form-urlencoded']?.schema;
    expect(form?.required).toEqual(['token']);
    expect(Object.keys(form?.properties ?? {}).sort()).toEqual(['client_id', 'client_secret', 'token', 'token_type_hint']);
    const base = server().service.baseUrl;
    const registered = await fetch(`${base}/api/oauth/mcp/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'revoker', redirect_uris: ['http://127.0.0.1:9/cb'] }),
    });
    const clientId = ((await registered.json()) as { client_id: string }).client_id;
    const sent = new URLSearchParams({ token: 'an-unknown-token', token_type_hint: 'access_token', client_id: clientId });
    expect(conformance.checkValue(form!, Object.fromEntries(sent), 'revocation form')).toEqual([]);
    const res = await fetch(`${base}/api/oauth/mcp/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: sent.toString() });
    expect(res.status).toBe(200);
    expect(conformance.check('POST', '/api/oauth/mcp/revoke', res.status, undefined)).toEqual([]);
    // The schema refuses a form without the token, as the endpoint does.
    expect(conformance.checkValue(form!, { client_id: clientId }, 'revocation form').length).toBeGreaterThan(0);
  });

  it('has an ordered, described tag list that every operation uses, grouped for the reference', async () => {
    const { doc } = await server().openapi();
    const top = doc as unknown as { tags?: { name: string; description?: string }[]; 'x-tagGroups'?: { name: string; tags: string[] }[] };
    const names = (top.tags ?? []).map((t) => t.name);
    expect(names.slice(0, 3)).toEqual(['Brands', 'Connections', 'Contents']);
    expect(new Set(names).size).toBe(names.length);
    for (const tag of top.tags ?? []) expect(tag.description?.length ?? 0, tag.name).toBeGreaterThan(40);
    const used = new Set<string>();
    for (const { key, doc: op } of documentOperations(doc)) {
      const tags = (op as { tags?: string[] }).tags ?? [];
      expect(tags.length, key).toBe(1);
      for (const t of tags) {
        expect(names, key).toContain(t);
        used.add(t);
      }
    }
    expect([...used].sort()).toEqual([...names].sort());
    const grouped = (top['x-tagGroups'] ?? []).flatMap((g) => g.tags);
    expect([...grouped].sort()).toEqual([...names].sort());
  });

  it('every operation answers a 2xx and documents its 4xx, but for the few that cannot', async () => {
    const { doc } = await server().openapi();
    for (const { key, doc: op } of documentOperations(doc)) {
      const statuses = Object.keys(op.responses ?? {});
      if (!NO_2XX.includes(key)) expect(statuses.some((s) => s.startsWith('2')), key).toBe(true);
      if (!NO_4XX.includes(key)) expect(statuses.some((s) => s.startsWith('4')), key).toBe(true);
    }
  });

  it('passes redocly lint with no error and no warning (rules turned off are explained in redocly.yaml)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
    try {
      const file = join(dir, 'openapi.yaml');
      // A connection of its own: the pooled one may be the server's idle keep-alive socket, closed as it is reused.
      const dispatcher = new Agent({ pipelining: 0 });
      writeFileSync(file, await (await fetchOnce(`${server().url}/openapi.yaml`, { dispatcher })).text());
      await dispatcher.close();
      const { stdout } = await run(process.execPath, ['node_modules/@redocly/cli/bin/cli.js', 'lint', file, '--config', 'redocly.yaml', '--format=json'], {
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
        maxBuffer: 20 * 1024 * 1024,
      });
      const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string; location: { pointer: string }[] }[] };
      expect(report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`)).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
