import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { Content, UpdatedContent } from '../../src/core/contents/contents.schema.js';
import { parseStoredRequest } from '../../src/core/jobs/stored-request.js';
import { blueskyEnv, startFakeBluesky, type FakeBluesky } from '../fakes/bluesky.js';
import { describeEachDb, type TestServer } from '../support/server.js';
import { addServiceEnv } from '../support/overrides.js';

/**
 * Per-network texts after creation, through REST: a content shows each platform's own text, an edit of the shared
 * text says which platforms kept theirs, and what a live network finally receives is the edited text (the real
 * Bluesky adapter against its fake) while an override keeps its own.
 */
let bluesky: FakeBluesky;
const env: Record<string, string> = { ALLOW_LOCAL_URLS: 'true' };
beforeAll(async () => {
  bluesky = await startFakeBluesky();
  addServiceEnv(env, blueskyEnv(bluesky));
});
afterAll(() => bluesky.close());

const START = Date.now();

describeEachDb(
  'per-network texts of a content',
  (server) => {
    /** A brand with a live Bluesky connection (app password against the fake) and a sandbox LinkedIn one. */
    async function tenant(s: TestServer) {
      const ws = await s.workspace();
      const key = ws.api_key;
      const base = `/api/v1/workspaces/${ws.workspace_id}`;
      const brand = await s.request('POST', `${base}/brands`, { key, body: { name: 'Downtown Deli' } });
      const brandId = brand.body.id as string;
      const live = await s.request('POST', `${base}/brands/${brandId}/connections/app-password`, {
        key,
        body: { platform_slug: 'bluesky', identifier: bluesky.account.handle, app_password: bluesky.account.appPassword },
      });
      expect(live.status, live.text).toBe(201);
      const sandbox = await s.request('POST', `${base}/brands/${brandId}/connections`, { key, body: { platform_slug: 'linkedin', mode: 'sandbox', name: 'Deli page' } });
      expect(sandbox.status, sandbox.text).toBe(201);
      return {
        brandId,
        create: (body: Record<string, unknown>) => s.request<{ content_id: string }>('POST', `${base}/contents`, { key, body: { brand_id: brandId, content_type: 'text', ...body } }),
        patch: (id: string, body: unknown) => s.request<UpdatedContent>('PATCH', `${base}/contents/${id}`, { key, body }),
        get: (id: string) => s.request<Content>('GET', `${base}/contents/${id}`, { key }),
        stored: async (id: string) => {
          const row = await s.container.db.kysely.selectFrom('contents').select('request').where('id', '=', id).executeTakeFirstOrThrow();
          return Object.fromEntries(parseStoredRequest(row.request).targets.map((t) => [t.platform, t.text]));
        },
      };
    }

    const soon = () => new Date((server().container.clock as ManualClock).now() + 10 * 60_000).toISOString();
    /** Moves the clock to a content's time and runs the workers until its jobs are final. */
    async function publishAt(at: string) {
      (server().container.clock as ManualClock).set(Date.parse(at));
      await server().settle();
    }
    const sentToBluesky = (from: number) => bluesky.posts.slice(from).map((p) => p.value.text);

    it('GET shows each platform’s own text; an edit of the shared text keeps an override, says so, and Bluesky receives the edited text', async () => {
      const t = await tenant(server());
      const created = await t.create({ target_platforms: ['bluesky', 'linkedin'], text: 'Dowtown lunch', overrides: { linkedin: { text: 'Dowtown lunch for teams' } }, publish_at: soon() });
      expect(created.status, created.text).toBe(201);
      const id = created.body.content_id;

      const shown = await t.get(id);
      expect(shown.body.overrides).toEqual({ linkedin: { text: 'Dowtown lunch for teams' } });
      expect(shown.body.media).toEqual([]);
      expect(shown.body.targets).toEqual([
        { platform_slug: 'bluesky', text: 'Dowtown lunch', title: null, own_text: false, own_title: false },
        { platform_slug: 'linkedin', text: 'Dowtown lunch for teams', title: null, own_text: true, own_title: false },
      ]);

      const edited = await t.patch(id, { text: 'Downtown lunch' });
      expect(edited.status, edited.text).toBe(200);
      expect(edited.body.kept_overrides).toEqual([{ platform_slug: 'linkedin', fields: ['text'] }]);
      expect(edited.body.targets.map((x) => [x.platform_slug, x.text, x.own_text])).toEqual([
        ['bluesky', 'Downtown lunch', false],
        ['linkedin', 'Dowtown lunch for teams', true],
      ]);
      expect(await t.stored(id)).toEqual({ bluesky: 'Downtown lunch', linkedin: 'Dowtown lunch for teams' });

      // The override is edited on its own (the whole object is sent); nothing is "kept" then.
      const fixed = await t.patch(id, { overrides: { linkedin: { text: 'Downtown lunch for teams' } } });
      expect(fixed.body.kept_overrides).toEqual([]);
      expect(await t.stored(id)).toEqual({ bluesky: 'Downtown lunch', linkedin: 'Downtown lunch for teams' });
      // An edit that does not touch the shared text reports nothing kept either.
      const moved = await t.patch(id, { publish_at: soon() });
      expect(moved.body.kept_overrides).toEqual([]);

      const before = bluesky.posts.length;
      await publishAt(moved.body.publish_at!);
      expect((await t.get(id)).body.status).toBe('published');
      expect(sentToBluesky(before)).toEqual(['Downtown lunch']);
    });

    it('an edited override of a live network is what that network receives', async () => {
      const t = await tenant(server());
      const created = await t.create({ target_platforms: ['bluesky', 'linkedin'], text: 'Soup of the day', overrides: { bluesky: { text: 'Soup of the dya 🍲' } }, publish_at: soon() });
      const id = created.body.content_id;
      const edited = await t.patch(id, { text: 'Soup of the day: lentil' });
      expect(edited.body.kept_overrides).toEqual([{ platform_slug: 'bluesky', fields: ['text'] }]);
      const fixed = await t.patch(id, { overrides: { bluesky: { text: 'Soup of the day 🍲' } } });
      expect(fixed.status, fixed.text).toBe(200);
      expect(fixed.body.overrides).toEqual({ bluesky: { text: 'Soup of the day 🍲' } });

      const before = bluesky.posts.length;
      await publishAt(fixed.body.publish_at!);
      expect(sentToBluesky(before)).toEqual(['Soup of the day 🍲']);
      // Cleared, the shared text applies again (checked on a second content: the first one is published).
      const second = await t.create({ target_platforms: ['bluesky'], text: 'Bread', overrides: { bluesky: { text: 'Braed' } }, publish_at: soon() });
      const cleared = await t.patch(second.body.content_id, { overrides: null });
      expect(cleared.body).toMatchObject({ overrides: null, targets: [{ platform_slug: 'bluesky', text: 'Bread', own_text: false }] });
    });
  },
  env,
  () => ({ clock: new ManualClock(START), workers: false }),
);
