import { createServer, type Server } from 'node:https';
import { afterAll, beforeAll } from 'vitest';
import { selfSignedCertificate } from './self-signed.js';

/** How the host answers one path. A plain object body is served as JSON. */
export interface DocumentRoute {
  body?: unknown;
  status?: number;
  headers?: Record<string, string>;
  /** Waits this long before answering (a slow host). */
  delayMs?: number;
}

/**
 * A local https server for client metadata documents, on 127.0.0.1 with a certificate made for the run. It
 * counts what reaches it (TLS connections and requests per path), so a test can prove a fetch never happened.
 */
export class DocumentHost {
  readonly routes = new Map<string, DocumentRoute>();
  readonly requests: string[] = [];
  connections = 0;

  private constructor(
    private readonly server: Server,
    readonly origin: string,
  ) {}

  static async start(): Promise<DocumentHost> {
    const server = createServer(selfSignedCertificate());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const host = new DocumentHost(server, `https://127.0.0.1:${(server.address() as { port: number }).port}`);
    server.on('secureConnection', () => (host.connections += 1));
    server.on('request', (req, res) => {
      const path = req.url ?? '/';
      host.requests.push(path);
      const route = host.routes.get(path);
      const answer = () => {
        if (!route) {
          res.writeHead(404).end();
          return;
        }
        const text = typeof route.body === 'string' ? route.body : JSON.stringify(route.body ?? {});
        res.writeHead(route.status ?? 200, { 'content-type': 'application/json', ...route.headers });
        res.end(text);
      };
      if (route?.delayMs) setTimeout(answer, route.delayMs).unref();
      else answer();
    });
    return host;
  }

  url(path: string): string {
    return `${this.origin}${path}`;
  }

  /** Serves `document(clientId)` at `path` and returns the client_id (the document's URL). */
  serve(path: string, document: (clientId: string) => Record<string, unknown>, extra: Omit<DocumentRoute, 'body'> = {}): string {
    const clientId = this.url(path);
    this.routes.set(path, { ...extra, body: document(clientId) });
    return clientId;
  }

  fetches(path: string): number {
    return this.requests.filter((p) => p === path).length;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * The server under test runs in this test process, and Node 20 cannot add a trusted CA at run time
 * (`tls.setDefaultCACertificates` arrived in Node 22.15; NODE_EXTRA_CA_CERTS is read only at start). So while a
 * suite talks to the self-signed host, certificate verification is off in this process (Node reads the variable
 * at each connection). What is under test is the address guard, the fence and the flow, not the PKI; a test
 * that runs before this proves the service does verify certificates.
 */
export function trustSelfSignedCertificates(): () => void {
  const before = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
  return () => {
    if (before === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    else process.env.NODE_TLS_REJECT_UNAUTHORIZED = before;
  };
}

/** Claude Code's document as published (no application_type; port-less loopback callbacks; max-age 300). */
export function claudeCodeDocument(clientId: string): Record<string, unknown> {
  return {
    client_id: clientId,
    client_name: 'Claude Code',
    client_uri: 'https://claude.ai',
    grant_types: ['authorization_code', 'refresh_token'],
    redirect_uris: ['http://localhost/callback', 'http://127.0.0.1/callback'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/** A random port in the dynamic range, as a native app's loopback listener would get. */
export function randomLoopbackPort(): number {
  return 49152 + Math.floor(Math.random() * 16000);
}

/**
 * A document host for the whole file, with self-signed certificates trusted while it runs (see
 * `trustSelfSignedCertificates`); the returned getter reads the host once `beforeAll` has started it.
 */
export function useTrustedDocumentHost(): () => DocumentHost {
  let host: DocumentHost | undefined;
  let restoreTls: (() => void) | undefined;
  beforeAll(async () => {
    host = await DocumentHost.start();
    restoreTls = trustSelfSignedCertificates();
  });
  afterAll(async () => {
    restoreTls?.();
    await host?.close();
  });
  return () => {
    if (host === undefined) throw new Error('the document host is started in beforeAll');
    return host;
  };
}
