import { expect, it } from 'vitest';
import { publishSandboxContainer, sandboxPostExists } from '../../db/repositories/sandbox.repo.js';
import { describeEachDb } from '../support/server.js';

/**
 * The sandbox network publishes a container at most once, whether its calls come one after another (a run that
 * lost the answer and resumes) or at once, each in its own transaction.
 */
describeEachDb('the sandbox network publishes a container once', (server) => {
  const row = (containerId: string, id: string) => ({ id, containerId, jobId: `job_${containerId}`, connectionId: 'conn_1', platformSlug: 'threads', now: 1 });
  const postsOf = async (containerId: string) =>
    (await server().container.db.kysely.selectFrom('sandbox_posts').select('id').where('container_id', '=', containerId).execute()).map((r) => r.id);

  it('a second publication of the same container answers the first post and makes none', async () => {
    const db = server().container.db.kysely;
    expect(await publishSandboxContainer(db, row('sbxc_a', 'sbx_first'))).toBe('sbx_first');
    expect(await publishSandboxContainer(db, row('sbxc_a', 'sbx_second'))).toBe('sbx_first');
    expect(await postsOf('sbxc_a')).toEqual(['sbx_first']);
    expect(await sandboxPostExists(db, 'sbx_first')).toBe(true);
    expect(await sandboxPostExists(db, 'sbx_second')).toBe(false);
  });

  it('20 publications of one container at once, each in its own transaction, all answer the one post made', async () => {
    const { kysely } = server().container.db;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => kysely.transaction().execute((tx) => publishSandboxContainer(tx, row('sbxc_b', `sbx_b${i}`)))));
    const posts = await postsOf('sbxc_b');
    expect(posts).toHaveLength(1);
    expect(new Set(answers)).toEqual(new Set(posts));
  });
});
