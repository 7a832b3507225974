import { expect, it } from 'vitest';
import { mintApiKey } from '../../src/core/api-keys/api-keys.service.js';
import { brandWithConnections } from '../support/factories.js';
import { DashboardClient, formAsSent, textOf } from '../support/dashboard.js';
import { describeEachDb } from '../support/server.js';

/** The dashboard's Approvals page and a content's approval history and comments, over plain HTTP with CSRF. */
describeEachDb('dashboard approvals', (server) => {
  it('lists a pending content, requests changes with a comment, shows the thread, and approves it to publish now', async () => {
    const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
    const db = server().container.db.kysely;
    const contributor = (await db.transaction().execute((tx) => mintApiKey(tx, ws.workspace_id, 'writer', Date.now(), { role: 'contributor', brandIds: null, createdBy: null }))).apiKey;
    const made = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, { key: contributor, body: { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'Waiting for a person' } });
    expect(made.body.status).toBe('pending_approval');
    const id = made.body.content_id as string;

    const owner = new DashboardClient(server().url);
    await owner.signIn(ws.api_key);
    const list = await owner.get('/dashboard/approvals');
    expect(list.status).toBe(200);
    expect(list.html).toContain('href="/dashboard/approvals" aria-current="page"');
    expect(textOf(list.html)).toContain('Waiting for a person');

    const sentBack = await owner.post(`/dashboard/contents/${id}/request-changes`, { ...formAsSent(list.html, `/dashboard/contents/${id}/request-changes`), comment: 'Add the date.' });
    expect(sentBack.url).toMatch(/\/dashboard\/approvals$/);
    expect(textOf(sentBack.html)).toContain('Sent back to its author');
    expect(textOf(sentBack.html)).toContain('Nothing is waiting for approval.');

    const writer = new DashboardClient(server().url);
    await writer.signIn(contributor);
    const page = await writer.get(`/dashboard/contents/${id}`);
    expect(textOf(page.html)).toContain('requested changes');
    expect(textOf(page.html)).toContain('Add the date.');
    const commented = await writer.post(`/dashboard/contents/${id}/comments`, { body: 'Done: Monday 9:00.' });
    expect(textOf(commented.html)).toContain('Done: Monday 9:00.');
    const resubmitted = await writer.post(`/dashboard/contents/${id}/submit`, {});
    expect(textOf(resubmitted.html)).toContain('Submitted for approval.');
    // The contributor sees no approval form on its own content.
    expect(resubmitted.html).not.toContain(`action="/dashboard/contents/${id}/approve"`);

    const again = await owner.get('/dashboard/approvals');
    const approved = await owner.post(`/dashboard/contents/${id}/approve`, { next: '/dashboard/approvals', publish_now: 'true' });
    expect(again.status).toBe(200);
    expect(textOf(approved.html)).toContain('Approved: publishing now.');
    const after = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${id}`, { key: ws.api_key });
    expect(after.body.status).toBe('publishing');
  });
});
