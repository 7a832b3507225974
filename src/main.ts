import { ConfigError, loadConfig } from './config.js';
import { exitOnSignals } from './shutdown.js';

/** Process entry: start, print where we listen (and the first key on a fresh install), stop cleanly on signals. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }

  // Loaded after the configuration is known good, so a bad value prints exactly one line (oidc-provider warns
  // about the Node version when it loads).
  const { startService } = await import('./server.js');
  const service = await startService(config);
  const { logger } = service.container;
  // Handlers go in before the banner: whoever reads the banner may signal us at once.
  exitOnSignals(logger, () => service.stop());
  if (config.allowLocalUrls) {
    logger.warn('ALLOW_LOCAL_URLS is on: webhooks and media may reach http and private addresses. For local testing only.');
  }

  const lines = [`Listening on ${service.listenUrl} (base URL ${service.baseUrl})`, `API description: ${service.baseUrl}/openapi.yaml`];
  // Only API processes serve pages and MCP; a worker process has neither.
  if (service.container.config.role !== 'worker') {
    lines.push(`Dashboard: ${service.baseUrl}/dashboard (sign in with an API key)`);
    // RFC 9728 §3.3: OAuth clients compare the protected resource's `resource` (built from BASE_URL) with the URL
    // they were given, so another spelling of the same address (127.0.0.1 for localhost) fails their check.
    lines.push(`MCP: ${service.baseUrl}/mcp (give clients this URL exactly as written: it must match BASE_URL)`);
  }
  const first = service.firstWorkspace;
  if (first) {
    lines.push(
      '',
      `First start: created workspace ${first.workspace_id} and its first API key (shown only now; store it):`,
      `  ${first.api_key}`,
      'Try it:',
      `  curl -H "Authorization: Bearer ${first.api_key}" ${service.baseUrl}/api/v1/workspaces/${first.workspace_id}/api-keys`,
    );
  } else {
    lines.push('Get an API key for a new workspace: npm run cli -- workspace create --name "My workspace" --json');
  }
  process.stdout.write(`${lines.join('\n')}\n`);

}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
