import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { ConfigError, loadConfig, loadStdioApiKey } from './config.js';
import { createContainer } from './container.js';
import { ServiceError } from './core/errors.js';
import { newId } from './core/ids.js';
import { createLogger } from './observability/logger.js';
import { exitOnSignals } from './shutdown.js';
import { buildMcpServer } from './mcp/server.js';

/**
 * The MCP door over stdio, for local assistants that spawn their tools (`npm run mcp:stdio`). It serves the same
 * tools as `/mcp`, acting as the workspace of `PUBLISHER_API_KEY`, with the background workers running so
 * publications proceed. stdout carries the protocol only: logs and messages go to stderr, no banner is printed
 * and no first-start workspace is created (the key must exist already: `npm run cli -- workspace create --json`).
 * Exit codes: 0 after the client closes stdin or on SIGTERM/SIGINT, 2 for bad configuration or key, 1 otherwise.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const apiKey = loadStdioApiKey();
  if (apiKey === undefined) {
    process.stderr.write('configuration error: PUBLISHER_API_KEY must hold the API key (svc_live_…) the MCP tools act with\n');
    process.exit(2);
  }

  const logger = createLogger(config.logLevel, process.stderr);
  const container = await createContainer(config, { logger });
  const { apiKeys } = container.services;
  try {
    await apiKeys.authenticate(apiKey); // fail at start rather than on the first tool call
  } catch (err) {
    await container.close();
    if (!(err instanceof ServiceError)) throw err;
    process.stderr.write(`configuration error: PUBLISHER_API_KEY: ${err.message}\n`);
    process.exit(2);
  }
  container.startWorkers();

  // One connection, either era: a 2025 client opens with `initialize`, a 2026-07-28 client with `server/discover`.
  const connection = serveStdio(
    () =>
      buildMcpServer({
        // Checked on every call, so revoking the key takes effect at once, as it does over HTTP.
        principal: async () => ({ ...(await apiKeys.authenticate(apiKey)), origin: { ip: null, userAgent: 'mcp-stdio', requestId: null, via: 'mcp' } }),
        services: container.services,
        log: logger,
        requestId: () => newId('req_'),
        baseUrl: config.baseUrl ?? `http://localhost:${config.port}`,
      }),
    { onerror: (err) => logger.warn({ err }, 'MCP stdio error') },
  );

  const shutdown = exitOnSignals(logger, () => Promise.all([connection.close(), container.close()]));
  // The transport does not notice the end of stdin; a client that closes it means "done".
  process.stdin.once('end', () => shutdown('stdin closed'));

  logger.info('MCP server ready on stdio');
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`configuration error: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
