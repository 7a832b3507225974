import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { requestContext, requestLog } from '../../src/web/request-context.js';

const servers: { close(): void }[] = [];
afterAll(() => servers.forEach((s) => s.close()));

describe('the request context (src/web/request-context.ts)', () => {
  it("binds the request's id to the logger a handler asks for, made once per request, and only when asked", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger('info', new Writable({ write: (c: Buffer, _e, done) => (lines.push(...c.toString().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)), done()) }));
    let children = 0;
    const child = logger.child.bind(logger);
    logger.child = ((...args: Parameters<typeof logger.child>) => (children++, child(...args))) as typeof logger.child;
    const app = express();
    app.use(requestContext(logger));
    app.get('/logs', (_req, res) => {
      const log = requestLog(res);
      log.info({ step: 1 }, 'handler');
      expect(requestLog(res)).toBe(log);
      res.json({ ok: true });
    });
    app.get('/quiet', (_req, res) => {
      res.json({ ok: true });
    });
    const server = app.listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const given = await fetch(`${base}/logs`, { headers: { 'x-request-id': 'trace-context-1' } });
    expect(given.headers.get('x-request-id')).toBe('trace-context-1');
    const made = await fetch(`${base}/logs`);
    const madeId = made.headers.get('x-request-id');
    expect(madeId).toMatch(/^req_/);
    expect(children).toBe(2);
    await fetch(`${base}/quiet`);
    expect(children).toBe(2);

    await new Promise((r) => setTimeout(r, 20));
    const handlerLines = lines.filter((l) => l.msg === 'handler');
    expect(handlerLines.map((l) => l.request_id)).toEqual(['trace-context-1', madeId]);
    // The access line is written through the process's logger with the same id, for every request.
    expect(lines.filter((l) => l.msg === 'request').map((l) => l.request_id)).toEqual(['trace-context-1', madeId, expect.stringMatching(/^req_/)]);
  });
});
