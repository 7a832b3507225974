import { createServer, type Server } from 'node:http';
import { type AddressInfo, Server as NetServer, type Socket } from 'node:net';
import { type ServingLock, takeServingLock } from '../db/serving-lock.js';
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

/** How long a kept-alive socket must have carried no request before a stopping server closes it. */
const IDLE_BEFORE_CLOSE_MS = 1_000;

/**
 * Graceful closing of an HTTP server's connections. Once `close` is called, every response carries
 * `Connection: close`, so a client learns with its answer not to send on that socket again, and the server ends
 * the socket after the response. A kept-alive socket that carries no request is closed only after it has been
 * idle `IDLE_BEFORE_CLOSE_MS`: a client that picked it up just before the stop has sent its request by then
 * (which is answered, with `Connection: close`). Closing idle sockets at once, as Node's `server.close()` does,
 * resets the request a client is sending on one at that moment. A client can still meet a reset by sending on a
 * socket at the instant it is closed (the usual keep-alive race); README's advice is to retry with the same
 * `Idempotency-Key`.
 */
function gracefulConnections(server: Server) {
  /** Per open socket: requests in flight on it, and when it last finished one (or opened). */
  const sockets = new Map<Socket, { active: number; idleSince: number }>();
  let closing = false;
  server.on('connection', (socket: Socket) => {
    sockets.set(socket, { active: 0, idleSince: performance.now() });
    socket.once('close', () => sockets.delete(socket));
  });
  // Registered before the app's listener, so the header is set before any handler writes.
  server.on('request', (req, res) => {
    const state = sockets.get(req.socket);
    if (state) {
      state.active += 1;
      res.once('close', () => {
        state.active -= 1;
        state.idleSince = performance.now();
      });
    }
    if (closing) res.setHeader('Connection', 'close');
  });
  return {
    /** Stops accepting and closes each socket once idle; resolves when every socket has closed, or at `graceMs`. */
    close(graceMs: number): Promise<void> {
      closing = true;
      // net's close, not http's: it stops accepting without closing the idle sockets at once (see above).
      const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
      const sweep = setInterval(() => {
        const now = performance.now();
        for (const [socket, state] of sockets) if (state.active === 0 && now - state.idleSince >= IDLE_BEFORE_CLOSE_MS) socket.destroy();
      }, 50);
      const force = setTimeout(() => server.closeAllConnections(), graceMs);
      return closed.finally(() => {
        clearInterval(sweep);
        clearTimeout(force);
      });
    },
  };
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
  const connections = gracefulConnections(server);
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
  // `localhost` stays a name in what is printed: it is the spelling browsers treat as a secure context.
  const host = config.host === 'localhost' ? 'localhost' : address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const listenUrl = `http://${host}:${address.port}`;
  const baseUrl = config.baseUrl ?? defaultBaseUrl(config.host, address.port);

  let container: Container;
  let firstWorkspace: NewWorkspace | null;
  let lock: ServingLock | undefined;
  try {
    // SQLite has one serving process (its rate limits count in that process's memory); a worker serves no limited door.
    const { database } = config;
    if (database.dialect === 'sqlite' && database.file !== ':memory:' && config.role !== 'worker') lock = takeServingLock(database.file);
    // The sandbox checkout's links name the address known only now when PORT is 0 (an ephemeral port).
    const paymentUrlTemplate = config.sandboxPayments ? sandboxPaymentUrlTemplate(baseUrl) : config.paymentUrlTemplate;
    container = await createContainer({ ...config, baseUrl, paymentUrlTemplate }, options);
    logger = container.logger;
    firstWorkspace = await container.services.workspaces.bootstrapOnce();
    server.on('request', await buildApp(container, baseUrl));
  } catch (err) {
    server.close();
    lock?.release();
    throw err;
  }
  if (options.workers !== false && config.role !== 'api') container.startWorkers();

  let stopping: Promise<void> | undefined;
  const stop = (graceMs = 10_000): Promise<void> => {
    stopping ??= (async () => {
      await connections.close(graceMs);
      await container.close();
      lock?.release();
    })();
    return stopping;
  };

  return { container, server, listenUrl, baseUrl, firstWorkspace, stop };
}
