import { connect } from 'node:net';
import { expect, it } from 'vitest';
import { bearerChallenge } from '../../src/web/bearer-challenge.js';
import { parserRefusal, renderRefusal } from '../../src/web/client-error.js';
import { describeEachDb, type TestServer } from '../support/server.js';

/**
 * Answers that no route handler writes: the HTTP parser's refusals, OPTIONS and methods a path does not
 * have, and the rate limit as the document states it. Spec 7.1: every error is JSON `{error, message,
 * request_id}` and `X-Request-Id` is on every response.
 */

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends bytes on a fresh connection and reads until the server closes it (or `waitMs` passes). */
function rawExchange(server: TestServer, payload: string, waitMs = 3_000): Promise<string> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let out = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(out);
    }, waitMs);
    socket.on('data', (d: Buffer) => (out += d.toString('latin1')));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      if (out.length > 0) resolve(out);
      else reject(err);
    });
    socket.write(payload);
  });
}

/** Splits one or more HTTP/1.1 answers read from a socket (Content-Length framed). */
function parseAnswers(text: string): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) break;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    answers.push({ status: Number(statusLine!.split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return answers;
}

function expectSpecError(answer: RawAnswer | undefined, status: number, code: string): void {
  expect(answer, 'no answer').toBeDefined();
  expect(answer!.status).toBe(status);
  expect(answer!.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(answer!.body) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'message', 'request_id']);
  expect(body.error).toBe(code);
  expect(body.request_id).toMatch(/^req_[0-9a-z]{20}$/);
  expect(answer!.headers['x-request-id']).toBe(body.request_id);
}

const host = 'Host: 127.0.0.1\r\n';

describeEachDb(
  'answers no route handler writes',
  (server) => {
    it('a header larger than the parser accepts answers 431 in the spec shape with X-Request-Id', async () => {
      const [answer] = parseAnswers(await rawExchange(server(), `GET /healthz?q=${'a'.repeat(20_000)} HTTP/1.1\r\n${host}\r\n`));
      expectSpecError(answer, 431, 'invalid_request');
      expect(answer!.headers.connection).toBe('close');
    });

    it.each([
      ['an obs-fold header line', `GET /healthz HTTP/1.1\r\n${host}X-Folded: a\r\n  b\r\n\r\n`],
      ['Content-Length together with Transfer-Encoding', `POST /api/v1/webhooks/verify HTTP/1.1\r\n${host}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`],
      ['a malformed request line', `GARBAGE\r\n\r\n`],
      ['a space inside a header name', `GET /healthz HTTP/1.1\r\n${host}Bad Name: x\r\n\r\n`],
      ['a bare LF inside a header value', `GET /healthz HTTP/1.1\r\n${host}X-A: a\rb\r\n\r\n`],
    ])('%s answers 400 invalid_request in the spec shape with X-Request-Id', async (_label, payload) => {
      const [answer] = parseAnswers(await rawExchange(server(), payload));
      expectSpecError(answer, 400, 'invalid_request');
    });

    it('on a pipelined connection the refusal follows the earlier answer intact, never inside it', async () => {
      const payload = `GET /readyz HTTP/1.1\r\n${host}\r\nGET /healthz?q=${'a'.repeat(20_000)} HTTP/1.1\r\n${host}\r\n`;
      const answers = parseAnswers(await rawExchange(server(), payload));
      expect(answers.map((a) => a.status)).toEqual([200, 431]);
      expect(JSON.parse(answers[0]!.body)).toMatchObject({ status: 'ok' });
      expectSpecError(answers[1], 431, 'invalid_request');
    });

    it('the listener maps each parser error to its status and the catalogue code', () => {
      expect(parserRefusal('HPE_HEADER_OVERFLOW')).toMatchObject({ status: 431, code: 'invalid_request' });
      expect(parserRefusal('HPE_INVALID_HEADER_TOKEN')).toMatchObject({ status: 400, code: 'invalid_request' });
      expect(parserRefusal('ERR_HTTP_REQUEST_TIMEOUT')).toMatchObject({ status: 408, code: 'invalid_request' });
      expect(parserRefusal('HPE_CHUNK_EXTENSIONS_OVERFLOW')).toMatchObject({ status: 413, code: 'payload_too_large' });
      const [answer] = parseAnswers(renderRefusal(parserRefusal(undefined), 'req_00000000000000000000'));
      expectSpecError(answer, 400, 'invalid_request');
    });

    it('the shared challenge says invalid_token only for a refused bearer token, and quotes its values', () => {
      const options = { realm: 'http://x"\\y', resourceMetadataUrl: 'http://x/.well-known/oauth-protected-resource/mcp' };
      expect(bearerChallenge(undefined, options)).toBe('Bearer realm="http://x\\"\\\\y", resource_metadata="http://x/.well-known/oauth-protected-resource/mcp"');
      for (const sent of ['Bearer abc', 'bearer abc', '  Bearer   abc  ']) expect(bearerChallenge(sent, options), sent).toContain('error="invalid_token"');
      for (const sent of ['', 'Bearer', 'Bearer   ', 'Basic abc', 'svc_live_00', 'Token abc']) expect(bearerChallenge(sent, options), sent).not.toContain('error=');
      expect(bearerChallenge('Bearer x', { scope: 'mcp' })).toBe('Bearer error="invalid_token", scope="mcp"');
      expect(bearerChallenge(undefined, {})).toBe('Bearer');
    });

    it('OPTIONS on a REST path answers 204 with Allow; a method the path lacks answers the spec body with Allow', async () => {
      const ws = await server().workspace();
      const path = `/api/v1/workspaces/${ws.workspace_id}/brands`;
      const options = await fetch(`${server().url}${path}`, { method: 'OPTIONS' });
      expect(options.status).toBe(204);
      expect(await options.text()).toBe('');
      expect(options.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD', 'OPTIONS', 'POST']);
      expect(options.headers.get('x-request-id')).toMatch(/^req_/);

      for (const method of ['PUT', 'PATCH', 'DELETE', 'PROPFIND']) {
        const res = await server().request(method, path, { key: ws.api_key, unchecked: true });
        expect(res.status, method).toBe(404);
        expect(res.headers.get('allow')).toBe(options.headers.get('allow'));
        expect(Object.keys(res.body).sort()).toEqual(['error', 'message', 'request_id']);
        expect(res.body).toMatchObject({ error: 'not_found', request_id: res.headers.get('x-request-id') });
        expect(String(res.body.message)).toContain('/api/v1/workspaces/{wsId}/brands');
      }
    });

    it('unknown paths, malformed percent-encoding and unreadable bodies answer in the spec shape', async () => {
      const ws = await server().workspace();
      const cases: [string, string, RequestInit, number, string][] = [
        ['unknown path', '/nope', {}, 404, 'not_found'],
        ['unknown API path', '/api/v1/nope', { method: 'POST' }, 404, 'not_found'],
        ['malformed percent-encoding', `/api/v1/workspaces/%ZZ/brands`, { headers: { authorization: `Bearer ${ws.api_key}` } }, 400, 'invalid_request'],
        [
          'gzip body',
          `/api/v1/workspaces/${ws.workspace_id}/brands`,
          { method: 'POST', headers: { authorization: `Bearer ${ws.api_key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: '{}' },
          400,
          'invalid_request',
        ],
        [
          'latin-1 charset',
          `/api/v1/workspaces/${ws.workspace_id}/brands`,
          { method: 'POST', headers: { authorization: `Bearer ${ws.api_key}`, 'content-type': 'application/json; charset=latin1' }, body: '{}' },
          400,
          'invalid_request',
        ],
      ];
      for (const [label, path, init, status, code] of cases) {
        const res = await fetch(`${server().url}${path}`, init);
        const body = (await res.json()) as Record<string, unknown>;
        expect(res.status, label).toBe(status);
        expect(body, label).toMatchObject({ error: code, request_id: res.headers.get('x-request-id') });
        expect(Object.keys(body).sort(), label).toEqual(['error', 'message', 'request_id']);
      }
    });

    it('a JSON body read directly (declared length) or by body-parser (chunked) gets the same answers', async () => {
      const ws = await server().workspace();
      const path = `/api/v1/workspaces/${ws.workspace_id}/brands`;
      const request = (body: string, lane: 'direct' | 'parser', extra = '') =>
        lane === 'direct'
          ? `POST ${path} HTTP/1.1\r\n${host}Authorization: Bearer ${ws.api_key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`
          : `POST ${path} HTTP/1.1\r\n${host}Authorization: Bearer ${ws.api_key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n${extra}Connection: close\r\n\r\n${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
      for (const lane of ['direct', 'parser'] as const) {
        const created = parseAnswers(await rawExchange(server(), request('\uFEFF{"name":"Café ☕"}', lane)))[0];
        expect(created?.status, lane).toBe(201);
        expect((JSON.parse(Buffer.from(created!.body, 'latin1').toString('utf8')) as { name: string }).name, lane).toBe('Café ☕');
        expectSpecError(parseAnswers(await rawExchange(server(), request('{"name":', lane)))[0], 400, 'invalid_request');
        expectSpecError(parseAnswers(await rawExchange(server(), request(`{"name":"${'x'.repeat(1024 * 1024)}"}`, lane)))[0], 413, 'payload_too_large');
      }
      // A declared length the body never reaches: the server answers when the client gives up, never hangs a worker.
      const short = `POST ${path} HTTP/1.1\r\n${host}Authorization: Bearer ${ws.api_key}\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"name":"a"}`;
      const socket = connect(Number(new URL(server().url).port), '127.0.0.1');
      socket.write(short);
      await new Promise((r) => setTimeout(r, 100));
      socket.destroy();
      const after = await fetch(`${server().url}${path}`, { headers: { authorization: `Bearer ${ws.api_key}` } });
      expect(after.status).toBe(200);
    });

    it('the OpenAPI document states the configured rate limit, not a constant', async () => {
      const yaml = await (await fetch(`${server().url}/openapi.yaml`)).text();
      expect(yaml).toContain('Requests are limited to 1234 per minute per workspace.');
      expect(yaml).toContain('1234 on this');
      expect(yaml).not.toMatch(/\b600\b/);
    });
  },
  { RATE_LIMIT_PER_MINUTE: '1234' },
);
