import { describe, expect, it } from 'vitest';
import { connect } from '../../db/connect.js';
import { sandboxPostsPerJob } from '../../db/repositories/sandbox.repo.js';
import { testDatabaseKinds } from '../support/databases.js';
import { startServiceProcess } from '../support/process.js';
import { TEST_SECRET_KEY } from '../support/server.js';
import { overrides } from '../support/overrides.js';

const PLATFORMS = ['facebook', 'threads', 'linkedin'];
const CONTENTS = 67; // × 3 platforms = 201 jobs

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('crash safety', () => {
  for (const kind of testDatabaseKinds()) {
    it(`SIGKILL with ~200 jobs in flight, restart: every job final, none posted twice [${kind.name}]`, async () => {
      const database = await kind.create();
      const env = {
        DATABASE_URL: database.url,
        SECRET_KEY: TEST_SECRET_KEY,
        ...overrides({ SANDBOX_DELAY: '100ms', CONFIRM_INTERVAL: '100ms', WORKER_POLL: '20ms', JOB_LEASE: '1500ms', JOB_RETRY_DELAYS: '100ms' }),
        WORKER_CONCURRENCY: '4',
      };
      const db = connect(kind.name === 'sqlite' ? { dialect: 'sqlite', file: database.url.replace(/^sqlite:/, '') } : { dialect: 'postgres', connectionString: database.url });
      let service = await startServiceProcess(env);
      try {
        const ws = /(ws_[0-9a-z]{20})/.exec(service.stdout())![1]!;
        const key = /(svc_live_[0-9a-f]{32})/.exec(service.stdout())![1]!;
        const call = async (method: string, path: string, body?: unknown) => {
          const res = await fetch(`${service.url}/api/v1/workspaces/${ws}${path}`, {
            method,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          return (await res.json()) as Record<string, unknown>;
        };
        const brand = await call('POST', '/brands', { name: 'crash' });
        for (const p of PLATFORMS) await call('POST', `/brands/${brand.id as string}/connections`, { platform_slug: p, mode: 'sandbox', name: p });
        await Promise.all(
          Array.from({ length: CONTENTS }, (_, i) =>
            call('POST', '/contents', { brand_id: brand.id, target_platforms: PLATFORMS, content_type: 'text', text: `post ${i}` }),
          ),
        );

        const published = async () =>
          Number((await db.kysely.selectFrom('jobs').select((eb) => eb.fn.countAll().as('n')).where('status', '=', 'published').executeTakeFirst())?.n ?? 0);
        const inFlight = async () =>
          Number(
            (await db.kysely.selectFrom('jobs').select((eb) => eb.fn.countAll().as('n')).where('locked_by', 'is not', null).executeTakeFirst())?.n ?? 0,
          );
        // Kill while some jobs are published and others are held by the worker mid-flight.
        await until(async () => (await published()) >= 20 && (await inFlight()) > 0, 30_000, 'jobs to be published and in flight');
        expect(await published()).toBeLessThan(CONTENTS * PLATFORMS.length);
        expect(await service.stop('SIGKILL')).toBeNull();

        service = await startServiceProcess(env);
        await until(
          async () => {
            const open = await db.kysely
              .selectFrom('jobs')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('status', 'not in', ['published', 'failed'])
              .executeTakeFirst();
            return Number(open?.n ?? 1) === 0;
          },
          60_000,
          'every job to be final',
        );

        const jobs = await db.kysely.selectFrom('jobs').select(['id', 'status', 'content_id']).execute();
        expect(jobs).toHaveLength(CONTENTS * PLATFORMS.length);
        expect(jobs.filter((j) => j.status !== 'published')).toEqual([]);
        const posts = await sandboxPostsPerJob(db.kysely);
        expect(posts).toHaveLength(jobs.length);
        expect(posts.filter((p) => p.posts !== 1)).toEqual([]);
        const contents = await db.kysely.selectFrom('contents').select(['id', 'status']).execute();
        expect(contents.filter((c) => c.status !== 'published')).toEqual([]);
        const events = await db.kysely.selectFrom('events').select(['subject_id', 'type']).execute();
        expect(events.filter((e) => e.type === 'content.published')).toHaveLength(CONTENTS);
        const usage = await call('GET', '/usage');
        const meters = usage.meters as { meter: string; used: number }[];
        expect(meters.find((m) => m.meter === 'publicacoes')?.used).toBe(CONTENTS * PLATFORMS.length);
        expect(meters.find((m) => m.meter === 'criacao_de_conteudos')?.used).toBe(CONTENTS);
      } finally {
        await service.stop('SIGTERM');
        await db.close();
        await database.drop();
      }
    }, 120_000);
  }
});
