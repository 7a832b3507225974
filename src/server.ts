import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from './app.js';
import { type Config, defaultBaseUrl, sandboxPaymentUrlTemplate } from './config.js';
import { type Container, type ContainerOptions, createContainer } from './container.js';
import type { NewWorkspace } from './core/workspaces/workspaces.service.js';
import type { Logger } from './observability/logger.js';
import { parserErrorAnswers } from './web/client-error.js';

export interface RunningService {
  container: Container;
  server: Server;
  /** Where the socket listens, e.g. http://127.0.0.1:8080. */
  listenUrl: string;
  baseUrl: string;
  /** Set on the first start of an installation only. */
  firstWorkspace: NewWorkspace | null;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes the database. */
  stop(graceMs?: number): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** config → db → migrate → container → HTTP server. Used by `main` and by the tests alike. */
export async function startService(config: Config, options: ContainerOptions & { workers?: boolean } = {}): Promise<RunningService> {
  // Listen first: with PORT=0 the port, hence the default base URL that OAuth metadata and links carry, is known
  // only then. Requests are served once the app is attached, after the database is ready.
  const server = createServer();
  // Longer than a load balancer's usual idle timeout (60 s) and than clients keep idle sockets, so the client, not
  // the server, closes an idle connection: a client never reuses a socket the server is closing at that moment
  // (ECONNRESET on a busy machine, where timers run late).
  server.keepAliveTimeout = 65_000;
  // A client that trickles headers or a body is cut off rather than holding a socket (slowloris).
  server.headersTimeout = 15_000;
  server.requestTimeout = 15 * 60_000; // long enough for large uploads on slow links
  // Requests the HTTP parser refuses (431, 400, 408) reach no handler: answer them in the spec's JSON shape with a
  // request id too (spec 7.1), after any response still being written on that connection.
  let logger: Logger | undefined;
  const parserErrors = parserErrorAnswers(() => logger);
  server.on('request', parserErrors.onRequest);
  server.on('clientError', parserErrors.onClientError);
  const address = await listen(server, config.port, config.host);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const listenUrl = `http://${host}:${address.port}`;
  const baseUrl = config.baseUrl ?? defaultBaseUrl(config.host, address.port);

  let container: Container;
  let firstWorkspace: NewWorkspace | null;
  try {
    // The sandbox checkout's links name the address known only now when PORT is 0 (an ephemeral port).
    const paymentUrlTemplate = config.sandboxPayments ? sandboxPaymentUrlTemplate(baseUrl) : config.paymentUrlTemplate;
    container = await createContainer({ ...config, baseUrl, paymentUrlTemplate }, options);
    logger = container.logger;
    firstWorkspace = await container.services.workspaces.bootstrapOnce();
    // Before any request: a process that starts beside others on one SQLite file waits for their counts.
    if (config.role !== 'worker') await container.rateCounting.join();
    server.on('request', await buildApp(container, baseUrl));
  } catch (err) {
    server.close();
    throw err;
  }
  if (options.workers !== false && config.role !== 'api') container.startWorkers();

  let stopping: Promise<void> | undefined;
  const stop = (graceMs = 10_000): Promise<void> => {
    stopping ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive sockets become idle as their last response ends; close them then rather than at their timeout.
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      const force = setTimeout(() => server.closeAllConnections(), graceMs);
      await closed;
      clearInterval(sweep);
      clearTimeout(force);
      await container.close();
    })();
    return stopping;
  };

  return { container, server, listenUrl, baseUrl, firstWorkspace, stop };
}
