import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetch as undiciFetch, MockAgent, type Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchMediaCapped, probeMedia } from '../../src/media/probe.js';
import { createSafeDispatcher, OutboundBlockedError, safeFetch, type OutboundPolicy } from '../../src/outbound/safe-fetch.js';

// No test here needs the internet (the machine has none): permitted traffic goes to servers on
// 127.0.0.1, and every refusal is asserted to happen before a socket is opened.

interface TestServer {
  origin: string;
  requests: { method: string; url: string; headers: IncomingMessage['headers'] }[];
  connections: () => number;
  close: () => Promise<void>;
}

const servers: TestServer[] = [];

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<TestServer> {
  const requests: TestServer['requests'] = [];
  let connections = 0;
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    handler(req, res);
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const handle: TestServer = {
    origin: `http://127.0.0.1:${port}`,
    requests,
    connections: () => connections,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  servers.push(handle);
  return handle;
}

/** Writes `total` bytes in 16 KiB chunks, honouring backpressure; resolves with what was written when the response closes. */
function stream(res: ServerResponse, total: number): Promise<{ written: number; finished: boolean }> {
  const chunk = Buffer.alloc(16 * 1024, 0x61);
  let written = 0;
  const closed = new Promise<{ written: number; finished: boolean }>((resolve) =>
    res.on('close', () => resolve({ written, finished: res.writableFinished })),
  );
  const pump = (): void => {
    while (written < total && !res.destroyed) {
      written += chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
    if (!res.destroyed) res.end();
  };
  pump();
  return closed;
}

const local: OutboundPolicy = { allowLocal: true };
const strict: OutboundPolicy = { allowLocal: false };
let localDispatcher: Dispatcher;
const ownDispatchers: Dispatcher[] = [];

beforeAll(() => {
  localDispatcher = createSafeDispatcher(local);
  ownDispatchers.push(localDispatcher);
});

afterAll(async () => {
  await Promise.all(ownDispatchers.map((d) => d.close()));
  await Promise.all(servers.map((s) => s.close()));
});

async function refusal(promise: Promise<unknown>): Promise<OutboundBlockedError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OutboundBlockedError);
  return err as OutboundBlockedError;
}

describe('allowLocal: true (local servers)', () => {
  it('probeMedia takes the size from HEAD when Content-Length is there', async () => {
    const srv = await serve((_req, res) => res.writeHead(200, { 'content-type': 'image/png', 'content-length': '1234' }).end());
    const probe = await probeMedia(`${srv.origin}/a.png`, local, { dispatcher: localDispatcher });
    expect(probe).toEqual({ ok: true, size: 1234, contentType: 'image/png' });
    expect(srv.requests.map((r) => r.method)).toEqual(['HEAD']);
  });

  it.each([
    ['HEAD gives no Content-Length', 200],
    ['HEAD is not allowed', 405],
    ['HEAD is not implemented', 501],
  ])('probeMedia falls back to a ranged GET when %s', async (_label, headStatus) => {
    const srv = await serve((req, res) => {
      if (req.method === 'HEAD') {
        // Chunked framing is the way to answer HEAD with no length at all (Node would add Content-Length: 0).
        res.writeHead(headStatus, { 'content-type': 'video/mp4', 'transfer-encoding': 'chunked' }).end();
        return;
      }
      res.writeHead(206, { 'content-type': 'video/mp4', 'content-range': 'bytes 0-0/5000000', 'content-length': '1' }).end('x');
    });
    const probe = await probeMedia(`${srv.origin}/v.mp4`, local, { dispatcher: localDispatcher });
    expect(probe).toEqual({ ok: true, size: 5_000_000, contentType: 'video/mp4' });
    expect(srv.requests.map((r) => [r.method, r.headers.range])).toEqual([
      ['HEAD', undefined],
      ['GET', 'bytes=0-0'],
    ]);
  });

  it('probeMedia reports size null when the server tells no size, and http_error on 404', async () => {
    const srv = await serve((req, res) => {
      if (req.url === '/missing') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'image/gif', 'transfer-encoding': 'chunked' }).end(req.method === 'GET' ? 'GIF89a' : undefined);
    });
    expect(await probeMedia(`${srv.origin}/g.gif`, local, { dispatcher: localDispatcher })).toEqual({ ok: true, size: null, contentType: 'image/gif' });
    expect(await probeMedia(`${srv.origin}/missing`, local, { dispatcher: localDispatcher })).toEqual({ ok: false, reason: 'http_error', status: 404 });
  });

  it("probeMedia stops at the caller's signal (a request's shared probe deadline), well before its own timeout", async () => {
    const srv = await serve(() => undefined); // never answers
    const started = performance.now();
    const probe = await probeMedia(`${srv.origin}/slow.jpg`, local, { dispatcher: localDispatcher, timeoutMs: 60_000, signal: AbortSignal.timeout(150) });
    expect(probe).toEqual({ ok: false, reason: 'unreachable' });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(srv.requests.map((r) => r.method)).toEqual(['HEAD']);
  });

  it('probeMedia and fetchMediaCapped report a closed port as unreachable', async () => {
    const srv = await serve(() => undefined);
    await srv.close();
    expect(await probeMedia(`${srv.origin}/x`, local, { dispatcher: localDispatcher })).toEqual({ ok: false, reason: 'unreachable' });
    expect(await fetchMediaCapped(`${srv.origin}/x`, 10, local, { dispatcher: localDispatcher })).toEqual({ ok: false, reason: 'unreachable' });
  });

  it('fetchMediaCapped returns a body within the cap', async () => {
    const srv = await serve((_req, res) => res.writeHead(200, { 'content-type': 'image/jpeg' }).end(Buffer.alloc(1000, 1)));
    const got = await fetchMediaCapped(`${srv.origin}/j.jpg`, 1000, local, { dispatcher: localDispatcher });
    expect(got).toMatchObject({ ok: true, bytes: 1000, contentType: 'image/jpeg' });
    expect(got.ok && got.body.equals(Buffer.alloc(1000, 1))).toBe(true);
  });

  it('fetchMediaCapped stops a chunked body past the cap and the server sees the connection close early', async () => {
    const total = 64 * 1024 * 1024;
    let closed: Promise<{ written: number; finished: boolean }> | undefined;
    const srv = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      closed = stream(res, total);
    });
    const got = await fetchMediaCapped(`${srv.origin}/endless.mp4`, 100 * 1024, local, { dispatcher: localDispatcher });
    expect(got).toEqual({ ok: false, reason: 'too_large' });
    const seen = await closed!;
    expect(seen.finished).toBe(false);
    expect(seen.written).toBeLessThan(total / 4);
  });

  it('fetchMediaCapped refuses a declared Content-Length over the cap without reading it', async () => {
    const total = 64 * 1024 * 1024;
    let closed: Promise<{ written: number; finished: boolean }> | undefined;
    const srv = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(total) });
      closed = stream(res, total);
    });
    const got = await fetchMediaCapped(`${srv.origin}/big.mp4`, 1024 * 1024, local, { dispatcher: localDispatcher });
    expect(got).toEqual({ ok: false, reason: 'too_large' });
    const seen = await closed!;
    expect(seen.finished).toBe(false);
    expect(seen.written).toBeLessThan(total / 4);
  });

  it('safeFetch follows a redirect chain (relative and absolute Location) and turns a 303 POST into a GET', async () => {
    const srv = await serve((req, res) => {
      if (req.url === '/a') return void res.writeHead(303, { location: '/b' }).end();
      if (req.url === '/b') return void res.writeHead(302, { location: `${srv.origin}/c` }).end('moved');
      res.writeHead(200, { 'content-type': 'text/plain' }).end('done');
    });
    const res = await safeFetch(`${srv.origin}/a`, { method: 'POST', body: 'payload', headers: { 'content-type': 'text/plain' } }, local, localDispatcher);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('done');
    expect(srv.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /a', 'GET /b', 'GET /c']);
    expect(srv.requests[1]?.headers['content-type']).toBeUndefined();
  });

  it('safeFetch gives up past maxRedirects with reason redirect_limit', async () => {
    const srv = await serve((req, res) => res.writeHead(302, { location: `/loop/${srv.requests.length}` }).end());
    const err = await refusal(safeFetch(`${srv.origin}/loop/0`, { maxRedirects: 3 }, local, localDispatcher));
    expect(err.reason).toBe('redirect_limit');
    expect(srv.requests).toHaveLength(4);
    expect(await probeMedia(`${srv.origin}/loop/0`, local, { dispatcher: localDispatcher })).toEqual({ ok: false, reason: 'blocked' });
  });
});

describe('allowLocal: false (refusals, no network)', () => {
  it.each(['http://example.com/a.png', 'ftp://example.com/a.png', 'file:///etc/passwd', 'data:text/plain,hi'])('refuses the scheme of %s', async (url) => {
    expect((await refusal(safeFetch(url, {}, strict))).reason).toBe('scheme');
    expect(await probeMedia(url, strict)).toEqual({ ok: false, reason: 'blocked' });
    expect(await fetchMediaCapped(url, 10, strict)).toEqual({ ok: false, reason: 'blocked' });
  });

  it('refuses credentials in the URL', async () => {
    expect((await refusal(safeFetch('https://user:pass@example.com/', {}, strict))).reason).toBe('credentials');
  });

  it.each([
    ['https://2130706433/', '127.0.0.1'],
    ['https://0x7f.0.0.1/', '127.0.0.1'],
    ['https://0177.0.0.1/', '127.0.0.1'],
    ['https://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
  ])('the URL parser normalises %s to %s before the check', (url, host) => {
    expect(new URL(url).hostname).toBe(host);
  });

  it.each([
    'https://127.0.0.1/',
    'https://[::1]/',
    'https://10.1.2.3/',
    'https://172.16.0.1/',
    'https://192.168.1.1/',
    'https://169.254.169.254/latest/meta-data/',
    'https://0.0.0.0/',
    'https://[::]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:169.254.169.254]/',
    'https://2130706433/',
    'https://0x7f.0.0.1/',
    'https://0177.0.0.1/',
    'https://100.64.0.1/',
    'https://224.0.0.1/',
    'https://255.255.255.255/',
    'https://[fc00::1]/',
    'https://[fe80::1]/',
    'https://[ff02::1]/',
    'https://[2002:7f00:1::]/',
    'https://[2001::1]/',
    'https://[64:ff9b::a01:203]/',
    'https://[::7f00:1]/',
  ])('refuses the address of %s', async (url) => {
    expect((await refusal(safeFetch(url, {}, strict))).reason).toBe('address');
    expect(await probeMedia(url, strict)).toEqual({ ok: false, reason: 'blocked' });
    expect(await fetchMediaCapped(url, 10, strict)).toEqual({ ok: false, reason: 'blocked' });
  });

  it('refuses a name that resolves to loopback (localhost) at connect time', async () => {
    expect((await refusal(safeFetch('https://localhost/', {}, strict))).reason).toBe('address');
  });

  it('the dispatcher itself refuses, before opening a socket, a name or an IP literal that is local', async () => {
    const srv = await serve((_req, res) => res.end('should never be reached'));
    const policy: OutboundPolicy = { allowLocal: false, allowHttp: true };
    const port = new URL(srv.origin).port;
    await refusal(safeFetch(`http://localhost:${port}/`, {}, policy));
    // Straight through undici, bypassing safeFetch's own URL check: the connector must judge the literal.
    const dispatcher = createSafeDispatcher(policy);
    ownDispatchers.push(dispatcher);
    const err = await undiciFetch(`${srv.origin}/`, { dispatcher }).then(
      () => null,
      (e: unknown) => (e instanceof Error ? e.cause : e),
    );
    expect(err).toBeInstanceOf(OutboundBlockedError);
    expect(srv.connections()).toBe(0);
  });

  it('refuses a name when any of its addresses is not public (resolver seam)', async () => {
    const resolved: string[] = [];
    const policy = (addresses: string[]): OutboundPolicy => ({
      allowLocal: false,
      resolve: async (host) => (resolved.push(host), addresses),
    });
    expect((await refusal(safeFetch('https://internal.example/', {}, policy(['10.0.0.5'])))).reason).toBe('address');
    expect((await refusal(safeFetch('https://mixed.example/', {}, policy(['93.184.216.34', '::ffff:192.168.0.1'])))).reason).toBe('address');
    expect(resolved).toEqual(['internal.example', 'mixed.example']);
  });

  describe('a redirect from an allowed-looking URL to a private one', () => {
    const resolved: string[] = [];
    const policy: OutboundPolicy = {
      allowLocal: false,
      // internal.example is the attacker's name for a private address; nothing else may be resolved.
      resolve: async (host) => {
        resolved.push(host);
        if (host === 'internal.example') return ['10.0.0.5'];
        throw new Error(`unexpected resolution of ${host}`);
      },
    };
    const mock = new MockAgent();
    let dispatcher: Dispatcher;

    beforeAll(() => {
      // The first hop, https://public.example, is answered in memory by MockAgent (net connect off);
      // every other origin goes through the real safe dispatcher, which must refuse it unconnected.
      mock.disableNetConnect();
      const pool = mock.get('https://public.example');
      const to: Record<string, string> = {
        '/to-name': 'https://internal.example/secret',
        '/to-metadata': 'https://169.254.169.254/latest/meta-data/',
        '/to-mapped': 'https://[::ffff:10.0.0.1]/',
        '/to-http': 'http://public.example/plain',
      };
      for (const [path, location] of Object.entries(to)) {
        for (const method of ['GET', 'HEAD']) pool.intercept({ path, method }).reply(302, '', { headers: { location } }).persist();
      }
      const safe = createSafeDispatcher(policy);
      ownDispatchers.push(safe, mock);
      dispatcher = safe.compose((dispatch) => (opts, handler) =>
        String(opts.origin) === 'https://public.example' ? mock.dispatch(opts, handler) : dispatch(opts, handler),
      );
    });

    it.each([
      ['/to-name', 'address'],
      ['/to-metadata', 'address'],
      ['/to-mapped', 'address'],
      ['/to-http', 'scheme'],
    ])('refuses the hop %s (%s)', async (path, reason) => {
      const url = `https://public.example${path}`;
      expect((await refusal(safeFetch(url, {}, policy, dispatcher))).reason).toBe(reason);
      expect(await probeMedia(url, policy, { dispatcher })).toEqual({ ok: false, reason: 'blocked' });
      expect(await fetchMediaCapped(url, 10, policy, { dispatcher })).toEqual({ ok: false, reason: 'blocked' });
    });

    it('judged internal.example by its resolved address, at connect time', () => {
      expect(new Set(resolved)).toEqual(new Set(['internal.example']));
    });
  });
});
