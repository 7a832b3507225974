import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { type TestDatabase, type TestDatabaseKind, testDatabaseKinds } from '../support/databases.js';
import { startTestServerOn, type TestServer } from '../support/server.js';
import { FIXTURE_ENV, FIXTURE_NOW, type FixtureManifest } from './fixture.js';

/**
 * A self-hoster's database, as an earlier release left it, migrates forward with nothing lost: every content and
 * its jobs, every webhook endpoint and delivery, the OAuth clients read the same through the REST API, the keys
 * still authenticate (and a revoked one still does not), and a dynamically registered client still authorizes.
 * The fixtures are written once by test/upgrade/make-fixture.ts at the release they stand for; a release whose
 * schema changed adds its own beside them.
 */
const FIXTURES = join(import.meta.dirname, 'fixtures');
const VERSIONS = ['0.1.0-602b56a'];

/** Listening ports change from run to run: the recorded answers name the fixture run's servers. */
function portless(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value).replace(/http:\/\/127\.0\.0\.1:\d+/g, 'http://127.0.0.1:PORT')) as unknown;
}

/** The fixture loaded into a database of its own, not yet migrated; and a count of its rate-limit rows. */
async function load(kind: TestDatabaseKind, version: string): Promise<{ database: TestDatabase; rateLimitRows: number }> {
  if (kind.name === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'publisher-upgrade-'));
    const file = join(dir, 'service.db');
    copyFileSync(join(FIXTURES, `${version}.sqlite`), file);
    const raw = new Database(file, { readonly: true });
    const { n } = raw.prepare('select count(*) as n from rate_limits').get() as { n: number };
    raw.close();
    return { database: { dialect: 'sqlite', url: `sqlite:${file}`, drop: async () => rmSync(dir, { recursive: true, force: true }) }, rateLimitRows: n };
  }
  const database = await kind.create({ empty: true });
  execFileSync('psql', ['--quiet', '--no-psqlrc', '-v', 'ON_ERROR_STOP=1', '--dbname', database.url, '--file', join(FIXTURES, `${version}.postgres.sql`)], { stdio: ['ignore', 'ignore', 'pipe'] });
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>('select count(*) as n from rate_limits');
    return { database, rateLimitRows: Number(rows[0]?.n) };
  } finally {
    await client.end();
  }
}

for (const version of VERSIONS) {
  const manifests = JSON.parse(readFileSync(join(FIXTURES, `${version}.json`), 'utf8')) as Record<string, FixtureManifest>;
  for (const kind of testDatabaseKinds()) {
    describe(`a ${kind.name} database of ${version} migrates forward with nothing lost`, () => {
      const fixture = manifests[kind.name]!;
      const ws = `/api/v1/workspaces/${fixture.workspace_id}`;
      let server: TestServer | undefined;
      let rateLimitRows = 0;
      const s = () => server!;

      beforeAll(async () => {
        const loaded = await load(kind, version);
        rateLimitRows = loaded.rateLimitRows;
        // Starting the service runs today's migrations; no worker runs, and the clock stands where the fixture's
        // did, so what the API answers is what was stored, not what happened since.
        server = await startTestServerOn(loaded.database, FIXTURE_ENV, { clock: new ManualClock(FIXTURE_NOW), workers: false });
      });
      afterAll(async () => {
        await server?.stop();
      });

      it('the fixture holds what it stands for: every kind of content, dead and delivered deliveries, rate-limit rows', () => {
        expect(Object.fromEntries(Object.entries(fixture.contents).map(([role, c]) => [role, c.status]))).toEqual({
          published: 'published',
          partial: 'partial',
          failed: 'failed',
          scheduled: 'scheduled',
          draft: 'draft',
        });
        expect(fixture.webhooks.ok?.deliveries.map((d) => d.status)).toEqual(['delivered', 'delivered', 'delivered']);
        expect(fixture.webhooks.down?.deliveries.map((d) => d.status)).toEqual(['dead']);
        expect(fixture.oauth_clients).toHaveLength(1);
        expect(rateLimitRows).toBeGreaterThan(0);
      });

      it('every content reads as it did, with every job', async () => {
        for (const [role, before] of Object.entries(fixture.contents)) {
          const res = await s().request('GET', `${ws}/contents/${String(before.content_id)}`, { key: fixture.keys.first });
          expect(res.status, role).toBe(200);
          expect(portless(res.body), role).toMatchObject(portless(before) as Record<string, unknown>);
          expect((res.body.jobs as unknown[]).length, role).toBe((before.jobs as unknown[]).length);
        }
        const list = await s().request('GET', `${ws}/contents?limit=100`, { key: fixture.keys.first });
        expect(list.status).toBe(200);
        expect((list.body.data as { content_id: string }[]).map((c) => c.content_id).sort()).toEqual(Object.values(fixture.contents).map((c) => String(c.content_id)).sort());
      });

      it('every webhook endpoint and every delivery with its attempts reads as it did', async () => {
        for (const [role, before] of Object.entries(fixture.webhooks)) {
          const endpoint = await s().request('GET', `${ws}/webhooks/${String(before.endpoint.id)}`, { key: fixture.keys.first });
          expect(endpoint.status, role).toBe(200);
          expect(portless(endpoint.body), role).toMatchObject(portless(before.endpoint) as Record<string, unknown>);
          const deliveries = await s().request('GET', `${ws}/webhooks/${String(before.endpoint.id)}/deliveries`, { key: fixture.keys.first });
          expect(deliveries.status, role).toBe(200);
          expect(portless(deliveries.body.data), role).toMatchObject(portless(before.deliveries) as Record<string, unknown>[]);
          expect((deliveries.body.data as unknown[]).length, role).toBe(before.deliveries.length);
        }
      });

      it('the API keys still authenticate, a revoked one still does not, and requests are still counted', async () => {
        for (const key of [fixture.keys.first, fixture.keys.rest]) {
          const res = await s().request('GET', `${ws}/usage`, { key });
          expect(res.status).toBe(200);
          expect(Number(res.headers.get('x-ratelimit-remaining'))).toBeGreaterThan(0);
          expect(Number(res.headers.get('x-ratelimit-limit'))).toBeGreaterThan(Number(res.headers.get('x-ratelimit-remaining')));
        }
        expect((await s().request('GET', `${ws}/usage`, { key: fixture.keys.revoked })).status).toBe(401);
      });

      it('the confidential OAuth client is listed as it was, and the registered public client still authorizes', async () => {
        const clients = await s().request('GET', `${ws}/oauth-clients`, { key: fixture.keys.first });
        expect(clients.status).toBe(200);
        expect(portless(clients.body.data)).toMatchObject(portless(fixture.oauth_clients) as Record<string, unknown>[]);
        expect((clients.body.data as unknown[]).length).toBe(fixture.oauth_clients.length);

        const authorize = async (clientId: string) => {
          const params = new URLSearchParams({
            client_id: clientId,
            redirect_uri: fixture.registered_client.redirect_uri,
            response_type: 'code',
            scope: 'mcp',
            code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
            code_challenge_method: 'S256',
          });
          return (await fetch(`${s().service.baseUrl}/api/oauth/mcp/authorize?${params}`, { redirect: 'manual' })).status;
        };
        // On to the consent page for the registered client; an unknown one is refused where it stands.
        expect(await authorize(fixture.registered_client.client_id)).toBe(303);
        expect(await authorize('mcp_client_unknown')).not.toBe(303);
      });
    });
  }
}
