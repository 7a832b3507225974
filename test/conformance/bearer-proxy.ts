import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback HTTP proxy that adds `Authorization: Bearer <key>` to every request and forwards everything else
 * as it came: method, path, header names with their case (the suite probes case-insensitive header handling)
 * and values, `Host` and `Origin` included (the suite probes DNS-rebinding protection), the body as a stream;
 * and the answer as it came: status, headers, body streamed chunk by chunk (SSE included).
 *
 * Why it exists: the conformance suite has no option to send a credential, and `/mcp` answers 401 without one.
 * Authentication of `/mcp` is tested on its own (test/mcp/oauth.test.ts, test/authz-matrix.test.ts); the proxy
 * only stands where an MCP host would put its token.
 */
export interface BearerProxy {
  /** e.g. http://127.0.0.1:40123 */
  url: string;
  /** Requests forwarded so far. */
  readonly forwarded: number;
  close(): Promise<void>;
}

/** Header pairs of `rawHeaders` without `Authorization`, names as the client spelled them. */
function headersWithoutAuthorization(incoming: IncomingMessage): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < incoming.rawHeaders.length; i += 2) {
    const name = incoming.rawHeaders[i]!;
    if (name.toLowerCase() !== 'authorization') pairs.push([name, incoming.rawHeaders[i + 1]!]);
  }
  return pairs;
}

export async function startBearerProxy(target: string, apiKey: string): Promise<BearerProxy> {
  const upstream = new URL(target);
  let forwarded = 0;
  const server: Server = createServer((req, res) => {
    forwarded++;
    const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url });
    // setHeader keeps the name's case on the wire; repeated names become one list, sent as repeated lines.
    const grouped = new Map<string, { name: string; values: string[] }>();
    for (const [name, value] of headersWithoutAuthorization(req)) {
      const entry = grouped.get(name.toLowerCase()) ?? { name, values: [] };
      entry.values.push(value);
      grouped.set(name.toLowerCase(), entry);
    }
    for (const { name, values } of grouped.values()) out.setHeader(name, values.length === 1 ? values[0]! : values);
    out.setHeader('Authorization', `Bearer ${apiKey}`);
    out.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
      // Each chunk is written as it arrives, so an SSE stream reaches the suite event by event.
      answer.pipe(res);
    });
    out.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`proxy: ${err.message}`);
      else res.destroy(err);
    });
    // A client that hangs up (the suite cancels streams it has read enough of) ends the upstream request too.
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get forwarded() {
      return forwarded;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
