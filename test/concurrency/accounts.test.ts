import { expect, it } from 'vitest';
import { insertMembership } from '../../db/repositories/memberships.repo.js';
import { insertUser } from '../../db/repositories/users.repo.js';
import { hashPassword } from '../../src/core/accounts/password.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import { newId } from '../../src/core/ids.js';
import { DashboardClient } from '../support/dashboard.js';
import { type Cluster, describeCluster } from './support.js';

/**
 * One-time things of an account under parallel requests split between two processes: a TOTP code signs in once,
 * a reset link sets one password.
 */

const PASSWORD = 'correct horse battery staple';

async function person(cluster: Cluster): Promise<{ id: string; email: string }> {
  const ws = await cluster.workspace();
  const db = cluster.server.container.db.kysely;
  const now = cluster.server.container.clock.now();
  const id = newId('usr_');
  const email = `${id.toLowerCase()}@example.com`;
  await insertUser(db, { id, email, name: null, passwordHash: await hashPassword(PASSWORD), emailVerifiedAt: null, createdAt: now, updatedAt: now });
  await insertMembership(db, { id: newId('mem_'), workspaceId: ws.workspace_id, userId: id, role: 'editor', brandIds: null, createdAt: now, updatedAt: now });
  return { id, email };
}

describeCluster('concurrent use of one-time account secrets', (cluster) => {
  it('the same TOTP code sent at once through both processes opens one session', async () => {
    const p = await person(cluster());
    const { accounts } = cluster().server.container.services;
    const { secret } = await accounts.twoFactor.start(p.id, p.email);
    // Confirmed with the previous step's code, so the current step's is still unused.
    await accounts.twoFactor.confirm(p.id, await totpCode(secret, Date.now() - 30_000));
    const browsers = await Promise.all(
      [0, 1, 2, 3].map(async (i) => {
        const browser = new DashboardClient(cluster().doors[i % cluster().processes]!.url);
        await browser.get('/dashboard/sign-in');
        const page = await browser.post('/dashboard/sign-in', { email: p.email, password: PASSWORD, next: '/dashboard' });
        expect(page.url).toMatch(/\/sign-in\/code$/);
        return browser;
      }),
    );
    const code = await totpCode(secret, Date.now());
    const pages = await Promise.all(browsers.map((b, i) => b.post(`${cluster().doors[(i + 1) % cluster().processes]!.url}/dashboard/sign-in/code`, { code, next: '/dashboard' })));
    const outcomes = pages.map((page) => (page.url.endsWith('/dashboard') ? 'signed in' : page.status));
    expect(outcomes.filter((o) => o === 'signed in'), JSON.stringify(outcomes)).toHaveLength(1);
    expect(outcomes.filter((o) => o === 401)).toHaveLength(3);
    const sessions = await cluster().server.container.db.kysely.selectFrom('user_sessions').select('id').where('user_id', '=', p.id).execute();
    expect(sessions).toHaveLength(1);
  });

  it('a reset link sent four times at once through both processes sets one password', async () => {
    const p = await person(cluster());
    const { link } = await cluster().server.container.services.accounts.resetLinkFor(p.email);
    const path = new URL(link).pathname;
    const pages = await cluster().split(4, async (door, i) => {
      const browser = new DashboardClient(door.url);
      await browser.get(path);
      return browser.post(path, { password: `new password number ${i}` });
    });
    const set = pages.filter((page) => page.url.endsWith('reason=password_set'));
    expect(set, JSON.stringify(pages.map((page) => [page.status, page.url]))).toHaveLength(1);
    expect(pages.filter((page) => page.status === 404)).toHaveLength(3);
  });
});
