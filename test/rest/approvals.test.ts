import { expect, it } from 'vitest';
import { mintApiKey } from '../../src/core/api-keys/api-keys.service.js';
import { ManualClock } from '../../src/core/clock.js';
import type { Content, CreatedContent } from '../../src/core/contents/contents.schema.js';
import type { Role } from '../../src/core/permissions/roles.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';

/**
 * Approvals through REST on both databases: a contributor's content waits as pending_approval (no job, no charge)
 * until a person approves it or requests changes; the thread of comments; an edit after approval by a
 * contributor sends it back; a pending content whose time passes never publishes; review events go only to
 * endpoints that list them. Time is the server's ManualClock; workers run only when a test drains them.
 */

/** Monday 2026-11-23 12:00 UTC. */
const T0 = Date.UTC(2026, 10, 23, 12);

type ErrorBody = { error: string; message: string; permission?: string; status?: string; fields?: { path: string }[] };
type Thread = { data: { kind: string; author: { type: string; id: string | null; label: string | null }; role: string | null; body: string | null }[] };

async function tenant(s: TestServer) {
  const { ws, brandId, connections } = await brandWithConnections(s, ['facebook', 'linkedin']);
  const base = `/api/v1/workspaces/${ws.workspace_id}`;
  const db = s.container.db.kysely;
  /** A key of `role` in this workspace, minted directly until scoped keys have their REST route. */
  const keyOf = async (role: Role, brandIds: string[] | null = null) =>
    (await db.transaction().execute((tx) => mintApiKey(tx, ws.workspace_id, `${role} key`, s.container.clock.now(), { role, brandIds, createdBy: null }))).apiKey;
  const as = (key: string) => ({
    create: (body: unknown) => s.request<CreatedContent>('POST', `${base}/contents`, { key, body }),
    patch: (id: string, body: unknown) => s.request<Content>('PATCH', `${base}/contents/${id}`, { key, body }),
    get: (id: string) => s.request<Content>('GET', `${base}/contents/${id}`, { key }),
    submit: (id: string) => s.request<Content>('POST', `${base}/contents/${id}/submit`, { key }),
    approve: (id: string, body?: unknown) => s.request<Content>('POST', `${base}/contents/${id}/approve`, { key, ...(body === undefined ? {} : { body }) }),
    requestChanges: (id: string, body: unknown) => s.request<Content>('POST', `${base}/contents/${id}/request-changes`, { key, body }),
    comments: (id: string) => s.request<Thread>('GET', `${base}/contents/${id}/comments`, { key }),
    comment: (id: string, body: unknown) => s.request('POST', `${base}/contents/${id}/comments`, { key, body }),
    publishNow: (id: string) => s.request<Content>('POST', `${base}/contents/${id}/publish`, { key }),
    cancel: (id: string) => s.request<Content>('POST', `${base}/contents/${id}/cancel`, { key }),
    pending: () => s.request<{ data: Content[] }>('GET', `${base}/approvals`, { key }),
  });
  const usage = async () => {
    const res = await s.request<{ meters: { meter: string; used: number }[] }>('GET', `${base}/usage`, { key: ws.api_key });
    const used = (m: string) => res.body.meters.find((x) => x.meter === m)!.used;
    return { contents: used('criacao_de_conteudos'), publications: used('publicacoes') };
  };
  const jobCount = async (contentId: string) => (await db.selectFrom('jobs').select('id').where('content_id', '=', contentId).execute()).length;
  const audit = async (contentId: string) =>
    (await db.selectFrom('audit_events').select(['action', 'actor_role']).where('target_id', '=', contentId).orderBy('occurred_at').orderBy('id').execute()).map((r) => `${r.action}:${r.actor_role}`);
  const post = (text: string, extra: Record<string, unknown> = {}) => ({ brand_id: brandId, target_platforms: ['facebook', 'linkedin'], content_type: 'text', text, ...extra });
  return { ws, base, brandId, connections, db, keyOf, as, admin: as(ws.api_key), usage, jobCount, audit, post };
}

describeEachDb(
  'approvals',
  (server) => {
    const clock = () => server().container.clock as ManualClock;
    /** Steps a second apart, so the thread and the outbox read in the order they were taken. */
    const tick = () => clock().set(clock().now() + 1000);

    it("a contributor's content that asks to publish answers 201 pending_approval: no job, no charge, and the scheduler never starts it", async () => {
      clock().set(T0);
      const t = await tenant(server());
      const contributor = t.as(await t.keyOf('contributor'));
      const now = await contributor.create(t.post('right away'));
      expect(now.status, now.text).toBe(201);
      expect(now.body).toMatchObject({ status: 'pending_approval', publish_at: null, jobs: [] });
      const later = await contributor.create(t.post('at nine', { publish_at: '2026-11-24T09:00:00Z' }));
      expect(later.body).toMatchObject({ status: 'pending_approval', publish_at: '2026-11-24T09:00:00.000Z', jobs: [] });
      // A draft stays a draft.
      expect((await contributor.create(t.post('a draft', { draft: true }))).body.status).toBe('draft');
      expect(await t.jobCount(now.body.content_id)).toBe(0);
      expect(await t.jobCount(later.body.content_id)).toBe(0);
      expect(await t.usage()).toEqual({ contents: 0, publications: 0 });
      // Created and submitted in one transaction: its two entries, in that order.
      expect(await t.audit(later.body.content_id)).toEqual(['content.created:contributor', 'content.submitted:contributor']);

      // Its time passes: it is overdue and still pending, nothing published or charged.
      clock().set(Date.UTC(2026, 10, 24, 10));
      await server().settle();
      const got = await contributor.get(later.body.content_id);
      expect(got.body).toMatchObject({ status: 'pending_approval', approval_overdue: true, jobs: [] });
      expect(await t.usage()).toEqual({ contents: 0, publications: 0 });
      const pending = await t.admin.pending();
      expect(pending.body.data.map((c) => [c.content_id, c.approval_overdue])).toEqual([
        [later.body.content_id, true],
        [now.body.content_id, false],
      ]);

      // The approver chooses: its own time is gone, so a bare approval is refused, naming publish_at.
      const bare = await t.admin.approve(later.body.content_id);
      expect(bare.status, bare.text).toBe(400);
      expect((bare.body as unknown as ErrorBody).fields?.map((f) => f.path)).toEqual(['publish_at']);
      const retimed = await t.admin.approve(later.body.content_id, { publish_at: '2026-11-24T15:00:00Z' });
      expect(retimed.status, retimed.text).toBe(200);
      expect(retimed.body).toMatchObject({ status: 'scheduled', publish_at: '2026-11-24T15:00:00.000Z', approval_overdue: false });
      expect(retimed.body.jobs.map((j) => j.status)).toEqual(['scheduled', 'scheduled']);
      expect(await t.usage()).toEqual({ contents: 0, publications: 0 });
      clock().set(Date.UTC(2026, 10, 24, 15));
      await server().settle();
      expect((await t.admin.get(later.body.content_id)).body.status).toBe('published');
      expect(await t.usage()).toEqual({ contents: 1, publications: 2 });
    });

    it('approve with publish_now starts the jobs and charges once; a second approval is refused and charges nothing', async () => {
      clock().set(T0);
      const t = await tenant(server());
      const contributor = t.as(await t.keyOf('contributor'));
      const c = (await contributor.create(t.post('soon', { publish_at: '2026-11-25T09:00:00Z' }))).body;
      // The contributor cannot approve, nor publish it directly.
      const own = await contributor.approve(c.content_id, { publish_now: true });
      expect(own.status).toBe(403);
      expect((own.body as unknown as ErrorBody).permission).toBe('contents.approve');
      const direct = await t.admin.publishNow(c.content_id);
      expect(direct.status).toBe(409);
      expect((direct.body as unknown as ErrorBody).status).toBe('pending_approval');

      tick();
      const approved = await t.admin.approve(c.content_id, { publish_now: true });
      expect(approved.status, approved.text).toBe(200);
      expect(approved.body.status).toBe('publishing');
      expect(approved.body.jobs.map((j) => j.status)).toEqual(['queued', 'queued']);
      expect(await t.usage()).toEqual({ contents: 1, publications: 2 });
      const again = await t.admin.approve(c.content_id, { publish_now: true });
      expect(again.status).toBe(409);
      expect(await t.usage()).toEqual({ contents: 1, publications: 2 });
      expect(await t.jobCount(c.content_id)).toBe(2);
      await server().settle();
      expect((await t.admin.get(c.content_id)).body.status).toBe('published');
      expect(await t.audit(c.content_id)).toEqual(['content.created:contributor', 'content.submitted:contributor', 'content.approved:owner']);
    });

    it('submit, request changes with a comment, the thread, edit and submit again, approve', async () => {
      clock().set(T0);
      const t = await tenant(server());
      const contributor = t.as(await t.keyOf('contributor'));
      const client = t.as(await t.keyOf('client'));
      const draft = (await contributor.create(t.post('first try', { draft: true }))).body;
      // A draft is not pending: approving it is refused.
      expect((await client.approve(draft.content_id)).status).toBe(409);
      tick();
      const submitted = await contributor.submit(draft.content_id);
      expect(submitted.status, submitted.text).toBe(200);
      expect(submitted.body).toMatchObject({ status: 'pending_approval', publish_at: null });
      // Submitting again answers it as it is.
      expect((await contributor.submit(draft.content_id)).body.status).toBe('pending_approval');

      const noComment = await client.requestChanges(draft.content_id, {});
      expect(noComment.status).toBe(400);
      expect((noComment.body as unknown as ErrorBody).fields?.map((f) => f.path)).toEqual(['comment']);
      tick();
      const sentBack = await client.requestChanges(draft.content_id, { comment: 'Mention the Monday opening.' });
      expect(sentBack.status, sentBack.text).toBe(200);
      expect(sentBack.body.status).toBe('changes_requested');
      // A viewer reads the thread but may not comment; the contributor answers.
      const viewer = t.as(await t.keyOf('viewer'));
      expect((await viewer.comment(draft.content_id, { body: 'me too' })).status).toBe(403);
      tick();
      const reply = await contributor.comment(draft.content_id, { body: 'Done, see the new text.' });
      expect(reply.status, reply.text).toBe(201);
      expect((await contributor.patch(draft.content_id, { text: 'Opening Monday!', publish_at: '2026-11-26T09:00:00Z' })).body).toMatchObject({
        status: 'changes_requested',
        publish_at: '2026-11-26T09:00:00.000Z',
        jobs: [],
      });
      tick();
      expect((await contributor.submit(draft.content_id)).body).toMatchObject({ status: 'pending_approval', publish_at: '2026-11-26T09:00:00.000Z' });
      tick();
      const approved = await client.approve(draft.content_id);
      expect(approved.status, approved.text).toBe(200);
      expect(approved.body).toMatchObject({ status: 'scheduled', publish_at: '2026-11-26T09:00:00.000Z', text: 'Opening Monday!' });

      const thread = await viewer.comments(draft.content_id);
      expect(thread.status).toBe(200);
      expect(thread.body.data.map((e) => [e.kind, e.role, e.body])).toEqual([
        ['submitted', 'contributor', null],
        ['changes_requested', 'client', 'Mention the Monday opening.'],
        ['comment', 'contributor', 'Done, see the new text.'],
        ['submitted', 'contributor', null],
        ['approved', 'client', null],
      ]);
      expect(thread.body.data[0]!.author).toEqual({ type: 'api_key', id: expect.stringMatching(/^key_/), label: 'contributor key' });
      expect(await t.audit(draft.content_id)).toEqual([
        'content.created:contributor',
        'content.submitted:contributor',
        'content.changes_requested:client',
        'content.commented:contributor',
        'content.updated:contributor',
        'content.submitted:contributor',
        'content.approved:client',
      ]);
    });

    it('an edit after approval by a contributor sends it back to pending_approval and removes its jobs; an admin edit keeps it scheduled', async () => {
      clock().set(T0);
      const t = await tenant(server());
      const contributor = t.as(await t.keyOf('contributor'));
      const c = (await contributor.create(t.post('v1', { publish_at: '2026-11-25T09:00:00Z' }))).body;
      expect((await t.admin.approve(c.content_id)).body.status).toBe('scheduled');
      expect((await t.admin.patch(c.content_id, { text: 'v2 by the owner' })).body.status).toBe('scheduled');
      const edited = await contributor.patch(c.content_id, { text: 'v3 by the contributor' });
      expect(edited.status, edited.text).toBe(200);
      expect(edited.body).toMatchObject({ status: 'pending_approval', publish_at: '2026-11-25T09:00:00.000Z', jobs: [] });
      expect(await t.jobCount(c.content_id)).toBe(0);
      clock().set(Date.UTC(2026, 10, 25, 9));
      await server().settle();
      expect((await t.admin.get(c.content_id)).body).toMatchObject({ status: 'pending_approval', approval_overdue: true });
      expect(await t.usage()).toEqual({ contents: 0, publications: 0 });
      // Canceled while pending: nothing was ever charged.
      expect((await t.admin.cancel(c.content_id)).body.status).toBe('canceled');
      expect(await t.usage()).toEqual({ contents: 0, publications: 0 });
    });

    it("a brand's approval roles: an editor's content waits, the editor may not approve it, another approver may", async () => {
      clock().set(T0);
      const t = await tenant(server());
      const editorKey = await t.keyOf('editor');
      const editor = t.as(editorKey);
      const free = await editor.create(t.post('before the rule', { publish_at: '2026-11-25T09:00:00Z' }));
      expect(free.body.status).toBe('scheduled');
      // Only owners and admins set the rule.
      const refused = await server().request('PATCH', `${t.base}/brands/${t.brandId}`, { key: editorKey, body: { approval_roles: ['editor'] } });
      expect(refused.status).toBe(403);
      const set = await server().request('PATCH', `${t.base}/brands/${t.brandId}`, { key: t.ws.api_key, body: { approval_roles: ['editor'] } });
      expect(set.status, set.text).toBe(200);
      expect(set.body).toMatchObject({ name: 'Acme', approval_roles: ['editor'] });
      const c = await editor.create(t.post('under the rule', { publish_at: '2026-11-25T09:00:00Z' }));
      expect(c.body.status).toBe('pending_approval');
      const self = await editor.approve(c.body.content_id);
      expect(self.status).toBe(403);
      const other = t.as(await t.keyOf('editor'));
      expect((await other.approve(c.body.content_id)).body.status).toBe('scheduled');

      // The workspace default applies to brands without their own list.
      const back = await server().request('PATCH', `${t.base}/brands/${t.brandId}`, { key: t.ws.api_key, body: { approval_roles: null } });
      expect(back.body).toMatchObject({ approval_roles: null });
      expect((await editor.create(t.post('default', { publish_at: '2026-11-25T09:00:00Z' }))).body.status).toBe('scheduled');
      const policy = await server().request('PUT', `${t.base}/approval-policy`, { key: t.ws.api_key, body: { approval_roles: ['editor', 'admin'] } });
      expect(policy.status, policy.text).toBe(200);
      expect((await server().request('GET', `${t.base}/approval-policy`, { key: editorKey })).body).toEqual({ approval_roles: ['editor', 'admin'] });
      expect((await editor.create(t.post('default now', { publish_at: '2026-11-25T09:00:00Z' }))).body.status).toBe('pending_approval');
      // An owner is never held: it can always approve and publish.
      expect((await t.admin.create(t.post('owner', { publish_at: '2026-11-25T09:00:00Z' }))).body.status).toBe('scheduled');
    });

    it('review events go only to endpoints that list them; an endpoint with the spec\'s four gets none', async () => {
      clock().set(T0);
      const t = await tenant(server());
      const hook = async (events: string[]) => {
        const res = await server().request<{ id: string }>('POST', `${t.base}/webhooks`, { key: t.ws.api_key, body: { url: 'https://hooks.example.com/in', description: '', enabled_events: events } });
        expect(res.status, res.text).toBe(201);
        return res.body.id;
      };
      const spec = await hook(['content.published', 'content.partial', 'content.failed', 'connection.expired']);
      const review = await hook(['content.approval_requested', 'content.approved', 'content.changes_requested']);
      const approvedOnly = await hook(['content.approved']);
      const contributor = t.as(await t.keyOf('contributor'));
      const c = (await contributor.create(t.post('hooks', { publish_at: '2026-11-25T09:00:00Z' }))).body;
      tick();
      await t.admin.requestChanges(c.content_id, { comment: 'shorter' });
      tick();
      await contributor.submit(c.content_id);
      tick();
      await t.admin.approve(c.content_id);
      const types = async (webhookId: string) =>
        (await t.db.selectFrom('deliveries').select(['event_type', 'body']).where('webhook_id', '=', webhookId).orderBy('created_at').orderBy('id').execute()).map((d) => d.event_type);
      expect(await types(spec)).toEqual([]);
      expect(await types(review)).toEqual(['content.approval_requested', 'content.changes_requested', 'content.approval_requested', 'content.approved']);
      expect(await types(approvedOnly)).toEqual(['content.approved']);
      const body = await t.db.selectFrom('deliveries').select('body').where('webhook_id', '=', review).where('event_type', '=', 'content.changes_requested').executeTakeFirstOrThrow();
      expect(JSON.parse(body.body)).toMatchObject({
        type: 'content.changes_requested',
        data: { content_id: c.content_id, workspace_id: t.ws.workspace_id, brand_id: t.brandId, status: 'changes_requested', comment: 'shorter', actor: { type: 'api_key', role: 'owner' } },
      });
    });

    it('a member limited to another brand sees none of its pending contents', async () => {
      clock().set(T0);
      const t = await tenant(server());
      const contributor = t.as(await t.keyOf('contributor'));
      const c = (await contributor.create(t.post('brand A', { publish_at: '2026-11-25T09:00:00Z' }))).body;
      const other = await server().request<{ id: string }>('POST', `${t.base}/brands`, { key: t.ws.api_key, body: { name: 'Other' } });
      const elsewhere = t.as(await t.keyOf('client', [other.body.id]));
      expect((await elsewhere.pending()).body.data).toEqual([]);
      expect((await elsewhere.approve(c.content_id)).status).toBe(403);
      expect((await t.as(await t.keyOf('client', [t.brandId])).pending()).body.data.map((x) => x.content_id)).toEqual([c.content_id]);
    });
  },
  {},
  () => ({ clock: new ManualClock(T0), workers: false }),
);
