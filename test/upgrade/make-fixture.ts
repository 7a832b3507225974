/**
 * Writes the upgrade test's fixtures: a database as a given version of the service leaves it, on SQLite and on
 * PostgreSQL, with what a self-hoster has in it after some use, all made through the service's own doors (REST,
 * dynamic client registration) on a service started in this process:
 *   - contents scheduled, drafted, published, partly published and failed, with their jobs;
 *   - webhook endpoints and their deliveries (delivered, failed after every retry);
 *   - API keys (the workspace's first, one made over REST, one revoked), a confidential OAuth client and a
 *     dynamically registered public one;
 *   - rate-limit rows (PostgreSQL counts in the database; on SQLite a second server on the file makes both count there).
 * Then `fixtures/<version>.sqlite` is the SQLite file as it was, `fixtures/<version>.postgres.sql` a plain
 * `pg_dump`, and `fixtures/<version>.json` what the REST API answered about each, which the upgrade test checks
 * against after migrating forward.
 *
 * Fixtures are made ONCE, from the commit whose schema they stand for, never from today's code (which would make
 * the test compare a schema with itself). To make one of a later release:
 *   git worktree add /tmp/at-release <commit> && cd /tmp/at-release && ln -s <checkout>/node_modules node_modules
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx test/upgrade/make-fixture.ts <version> <checkout>/test/upgrade/fixtures
 * and list the new version in upgrade.test.ts. It needs `pg_dump` of the PostgreSQL server's major version.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ManualClock } from '../../src/core/clock.js';
import { testDatabaseKinds, type TestDatabase } from '../support/databases.js';
import { walkDeliveries } from '../support/deliveries.js';
import { brandWithConnections } from '../support/factories.js';
import { startReceiver } from '../support/receiver.js';
import { startTestServerOn, type TestServer } from '../support/server.js';
import { FIXTURE_ENV, FIXTURE_NOW, type FixtureManifest } from './fixture.js';

const DAY = 86_400_000;

async function ok(server: TestServer, method: string, path: string, key: string, body?: unknown, want = [200, 201, 202, 204]) {
  const res = await server.request(method, path, body === undefined ? { key } : { key, body });
  if (!want.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return res;
}

async function fill(server: TestServer, receiverUrl: string, label: string): Promise<FixtureManifest> {
  const ws = await server.workspace('Upgrade fixture');
  const wsPath = `/api/v1/workspaces/${ws.workspace_id}`;
  const { brandId } = await brandWithConnections(server, ['linkedin', 'bluesky', 'mastodon'], ws);

  const restKey = (await ok(server, 'POST', `${wsPath}/api-keys`, ws.api_key, { name: 'deploy script' })).body as { id: string; api_key: string };
  const revoked = (await ok(server, 'POST', `${wsPath}/api-keys`, ws.api_key, { name: 'leaked laptop' })).body as { id: string; api_key: string };
  await ok(server, 'DELETE', `${wsPath}/api-keys/${revoked.id}`, ws.api_key);

  const hookOk = (await ok(server, 'POST', `${wsPath}/webhooks`, ws.api_key, {
    url: `${receiverUrl}/${label}/ok`,
    description: 'answers 200',
    enabled_events: ['content.published', 'content.partial', 'content.failed'],
  })).body as { id: string };
  const hookDown = (await ok(server, 'POST', `${wsPath}/webhooks`, ws.api_key, {
    url: `${receiverUrl}/${label}/down`,
    description: 'answers 500',
    enabled_events: ['content.failed'],
  })).body as { id: string };

  const create = async (body: Record<string, unknown>) =>
    ((await ok(server, 'POST', `${wsPath}/contents`, ws.api_key, { brand_id: brandId, content_type: 'text', ...body })).body as { content_id: string }).content_id;
  const contents = {
    published: await create({ target_platforms: ['linkedin', 'bluesky'], text: 'Published everywhere' }),
    partial: await create({ target_platforms: ['linkedin', 'mastodon'], text: 'Half of it', sandbox_outcomes: { mastodon: 'quota_exceeded' } }),
    failed: await create({ target_platforms: ['bluesky'], text: 'Refused', sandbox_outcomes: { bluesky: 'upstream_unknown' } }),
    scheduled: await create({ target_platforms: ['linkedin'], text: 'Next week', publish_at: new Date(FIXTURE_NOW + 7 * DAY).toISOString() }),
    draft: await create({ target_platforms: ['mastodon'], text: 'Not yet', draft: true }),
  };
  // Publishes what is due (not the scheduled one: the clock stays far before its time), then the events' deliveries.
  await server.settle();
  if (!(await walkDeliveries(server, 50))) throw new Error('deliveries did not settle');

  const confidential = (await ok(server, 'POST', `${wsPath}/oauth-clients`, ws.api_key, { client_name: 'Partner dashboard', redirect_uris: ['https://partner.example/callback'] })).body as { client_id: string };
  const registration = await fetch(`${server.service.baseUrl}/api/oauth/mcp/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Desktop MCP client', redirect_uris: ['http://127.0.0.1/callback'] }),
  });
  if (registration.status !== 201) throw new Error(`register: ${registration.status} ${await registration.text()}`);
  const registered = (await registration.json()) as { client_id: string };

  const manifest: FixtureManifest = {
    workspace_id: ws.workspace_id,
    keys: { first: ws.api_key, rest: restKey.api_key, revoked: revoked.api_key },
    contents: {},
    webhooks: {},
    oauth_clients: ((await ok(server, 'GET', `${wsPath}/oauth-clients`, ws.api_key)).body.data as Record<string, unknown>[]),
    registered_client: { client_id: registered.client_id, redirect_uri: 'http://127.0.0.1/callback' },
  };
  for (const [name, id] of Object.entries(contents)) manifest.contents[name] = (await ok(server, 'GET', `${wsPath}/contents/${id}`, ws.api_key)).body;
  for (const [name, hook] of Object.entries({ ok: hookOk, down: hookDown })) {
    manifest.webhooks[name] = {
      endpoint: (await ok(server, 'GET', `${wsPath}/webhooks/${hook.id}`, ws.api_key)).body,
      deliveries: (await ok(server, 'GET', `${wsPath}/webhooks/${hook.id}/deliveries`, ws.api_key)).body.data as Record<string, unknown>[],
    };
  }
  if (confidential.client_id === undefined) throw new Error('no confidential client');
  return manifest;
}

/** Requests made with the keys count in `rate_limits`; on SQLite a second server on the same file makes both count there. */
async function countSomeRequests(server: TestServer, manifest: FixtureManifest): Promise<void> {
  let beside: TestServer | undefined;
  if (server.database.dialect === 'sqlite') {
    beside = await startTestServerOn({ ...server.database, drop: async () => undefined }, FIXTURE_ENV, { clock: server.container.clock, workers: false });
  }
  for (const target of beside ? [server, beside] : [server]) {
    for (const key of [manifest.keys.first, manifest.keys.rest]) await ok(target, 'GET', `/api/v1/workspaces/${manifest.workspace_id}/usage`, key);
  }
  await beside?.service.stop(1000);
  const rows = await server.container.db.kysely.selectFrom('rate_limits').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  if (Number(rows.n) === 0) throw new Error(`no rate_limits row on ${server.database.dialect}`);
}

async function main(): Promise<void> {
  const [version, outArg] = process.argv.slice(2);
  if (version === undefined || !/^[\w.-]+$/.test(version)) throw new Error('usage: make-fixture.ts <version> [out-dir]');
  const out = resolve(outArg ?? join(import.meta.dirname, 'fixtures'));
  mkdirSync(out, { recursive: true });
  const kinds = testDatabaseKinds();
  if (kinds.length < 2) throw new Error('TEST_DATABASE_URL must be set: the fixtures are made on both databases');
  const receiver = await startReceiver((path) => (path.endsWith('/down') ? 500 : 200));
  const manifests: Record<string, FixtureManifest> = {};
  try {
    for (const kind of kinds) {
      const database: TestDatabase = await kind.create({ empty: true });
      const server = await startTestServerOn({ ...database, drop: async () => undefined }, FIXTURE_ENV, { clock: new ManualClock(FIXTURE_NOW), workers: false });
      try {
        const manifest = await fill(server, receiver.url, kind.name);
        await countSomeRequests(server, manifest);
        manifests[kind.name] = manifest;
      } finally {
        await server.stop();
      }
      if (kind.name === 'sqlite') {
        copyFileSync(database.url.slice('sqlite:'.length), join(out, `${version}.sqlite`));
      } else {
        const dump = execFileSync('pg_dump', ['--no-owner', '--no-privileges', '--dbname', database.url], { maxBuffer: 64 * 1024 * 1024 }).toString('utf8');
        writeFileSync(join(out, `${version}.postgres.sql`), dump);
      }
      await database.drop();
    }
  } finally {
    await receiver.close();
  }
  writeFileSync(join(out, `${version}.json`), `${JSON.stringify(manifests, null, 2)}\n`);
  console.log(`fixtures of ${version} written to ${out}`);
}

await main();
