import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import helmet, { type HelmetOptions } from 'helmet';
import { afterAll, describe, expect, it } from 'vitest';
import { securityHeaders } from '../../src/web/security-headers.js';

const OPTIONS: HelmetOptions = { contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } }, crossOriginResourcePolicy: false };

const servers: { close(): void }[] = [];
afterAll(() => servers.forEach((s) => s.close()));

/** The headers a real request gets from an app using `middleware` in front of a plain route. */
async function headersThrough(middleware: RequestHandler): Promise<Record<string, string>> {
  const app = express();
  app.disable('x-powered-by');
  app.use(middleware);
  app.get('/x', (_req, res) => {
    res.json({ ok: true });
  });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`);
  const headers = Object.fromEntries(answer.headers);
  delete headers.date;
  return headers;
}

describe('security headers taken from helmet once (src/web/security-headers.ts)', () => {
  it('answers with exactly the headers helmet itself writes, values and all', async () => {
    const ours = await headersThrough(securityHeaders(OPTIONS));
    const helmets = await headersThrough(helmet(OPTIONS));
    expect(ours).toEqual(helmets);
    expect(ours['content-security-policy']).toContain("default-src 'none'");
    expect(ours['strict-transport-security']).toMatch(/^max-age=/);
    expect(ours['cross-origin-resource-policy']).toBeUndefined();
  });

  it('refuses a directive computed per request, which a header fixed at start cannot carry', () => {
    const nonce = () => "'nonce-abc'";
    expect(() => securityHeaders({ contentSecurityPolicy: { directives: { scriptSrc: ["'self'", nonce] } } })).toThrow(/per request/);
  });
});
