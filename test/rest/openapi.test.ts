import { Validator } from '@seriousme/openapi-schema-validator';
import { expect, it } from 'vitest';
import { restRoutes } from '../../src/app.js';
import { ERROR_CODES, errorCatalogue } from '../../src/core/errors.js';
import { describeEachDb } from '../support/server.js';

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
      connections_required: ['connections'],
      platform_not_supported: ['platform_slug'],
      media_too_large: ['platform_slug', 'limit', 'fields'],
      caption_too_long: ['platform_slug', 'limit', 'fields'],
      content_not_editable: ['status'],
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
});
