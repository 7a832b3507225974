import { existsSync } from 'node:fs';
import { ServingLockHeld } from '../db/serving-lock.js';
import { ConfigError, loadConfig } from './config.js';
import { JOIN_PATH } from './core/members/invitations.service.js';
import { firstKeyFile, writeFirstKeyFile } from './first-key-file.js';
import { linkedinVersionWarning } from './networks/linkedin/version.js';
import type { startService } from './server.js';
import { exitOnSignals } from './shutdown.js';

/** oidc-provider's warning on a Node.js line older than 22 (its `lib/index.js`), printed when it loads. */
const RUNTIME_WARNING = /oidc-provider WARNING: Unsupported runtime/;
const RUNTIME_NOTE =
  'Note: the OAuth library below asks for Node.js 22 LTS or later; this service supports and is tested on Node.js >= 20.19, so it works as is (a newer Node.js silences it).';

/**
 * Loads the server while holding back what its libraries print with `console.warn` as they load, so the banner
 * is the first thing a newcomer reads; the held lines follow it, each known one with its explanation.
 */
async function loadServer(): Promise<{ module: { startService: typeof startService }; heldWarnings: unknown[][] }> {
  const heldWarnings: unknown[][] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => heldWarnings.push(args);
  try {
    return { module: await import('./server.js'), heldWarnings };
  } finally {
    console.warn = warn;
  }
}

function releaseWarnings(held: unknown[][]): void {
  for (const args of held) {
    if (args.some((a) => typeof a === 'string' && RUNTIME_WARNING.test(a))) process.stderr.write(`${RUNTIME_NOTE}\n`);
    console.warn(...args);
  }
}

/** Process entry: start, print the banner (and the first key on a fresh install), stop cleanly on signals. */
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

  // Loaded after the configuration is known good, so a bad value prints exactly one line.
  const { module: server, heldWarnings } = await loadServer();
  let service;
  try {
    service = await server.startService(config);
  } catch (err) {
    releaseWarnings(heldWarnings);
    if (err instanceof ServingLockHeld) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const { logger } = service.container;
  // Handlers go in before the banner: whoever reads the banner may signal us at once.
  exitOnSignals(logger, () => service.stop());

  const base = service.baseUrl;
  const lines = [`Listening on ${service.listenUrl} (base URL ${base})`];
  // Only API processes serve pages, docs and MCP; a worker process has neither.
  if (config.role !== 'worker') {
    lines.push(
      `  Dashboard  ${base}/dashboard (sign in with an API key)`,
      // RFC 9728 §3.3: OAuth clients compare the protected resource's `resource` (built from BASE_URL) with the URL
      // they were given, so another spelling of the same address (localhost for 127.0.0.1) fails their check.
      `  MCP        ${base}/mcp (give clients this URL exactly as written: it must match BASE_URL)`,
      `  API docs   ${base}/docs`,
    );
  }
  lines.push(`  OpenAPI    ${base}/openapi.yaml`);

  const keyFile = firstKeyFile(config);
  const first = service.firstWorkspace;
  if (first) {
    const saved = writeFirstKeyFile(keyFile, { key: first.api_key, workspaceId: first.workspace_id, baseUrl: base });
    lines.push(
      '',
      `First start: created workspace ${first.workspace_id} and its first API key (shown only now; store it):`,
      `  ${first.api_key}`,
      saved === null ? `Also saved, readable by you only, in ${keyFile.display}` : `Could not save it to ${keyFile.display} (${saved}): copy it now.`,
      'Paste into your shell to use it, then follow "Publishing in five requests" in README.md:',
      `  export KEY=${first.api_key} WS=${first.workspace_id} BASE=${base}`,
      `  curl -s -H "Authorization: Bearer $KEY" $BASE/api/v1/me`,
    );
    if (first.owner_invitation_token !== undefined) {
      lines.push(
        '',
        'Create the owner account (a person with a password, who invites the others) by opening this one-time link within 7 days:',
        `  ${base}${JOIN_PATH}${first.owner_invitation_token}`,
      );
    }
  } else {
    if (existsSync(keyFile.path)) lines.push('', `The first API key is in ${keyFile.display}: load it into your shell with  . ${keyFile.display}`);
    else lines.push('');
    lines.push('A key for a workspace: npm run cli -- workspace list, then npm run cli -- key create --workspace ws_…');
  }
  process.stdout.write(`${lines.join('\n')}\n`);

  releaseWarnings(heldWarnings);
  if (config.deprecatedSettings.length > 0) {
    // One line for all of them: the old names are read for this release only.
    logger.warn(`Deprecated settings, read in this release only (see Configuration in README.md): ${config.deprecatedSettings.join('; ')}`);
  }
  if (config.allowLocalUrls) {
    logger.warn('ALLOW_LOCAL_URLS is on: webhooks and media may reach http and private addresses. For local testing only.');
  }
  const linkedin = config.networks.linkedin;
  // Only an installation that publishes to LinkedIn is concerned by the version it sends.
  const stale = linkedin.clientId && linkedin.apiVersion ? linkedinVersionWarning(linkedin.apiVersion, service.container.clock.now()) : null;
  if (stale) logger.warn(stale);
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
