import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { blueskyEnv, startFakeBluesky } from '../fakes/bluesky.js';
import { startFakeMastodon, type FakeMastodon } from '../fakes/mastodon.js';
import { startFakeThreads, threadsEnv, type FakeThreads } from '../fakes/threads.js';
import { startFakeX, xEnv, type FakeX } from '../fakes/x.js';
import { describeEachDb, type TestServer } from '../support/server.js';
import { addServiceEnv } from '../support/overrides.js';

/**
 * Chains through the whole service: a content created over REST, published by the workers through the four
 * chain networks' real adapters on live connections, each against its local fake. A sandbox connection never
 * reaches an adapter, so only this path shows what a network is really sent.
 */
let bluesky: Awaited<ReturnType<typeof startFakeBluesky>>;
let x: FakeX;
let threads: FakeThreads;
let mastodon: FakeMastodon;
const env: Record<string, string> = { ALLOW_LOCAL_URLS: 'true' };

beforeAll(async () => {
  [bluesky, x, threads, mastodon] = await Promise.all([startFakeBluesky(), startFakeX(), startFakeThreads(), startFakeMastodon()]);
  addServiceEnv(env, blueskyEnv(bluesky), xEnv(x), threadsEnv(threads));
});
afterAll(async () => {
  // Every body the adapter sent to X held to X's OpenAPI (the fake would have refused it otherwise).
  expect(x.schemaViolations).toEqual([]);
  await Promise.all([bluesky.close(), x.close(), threads.close(), mastodon.close()]);
});

const CHAIN_NETWORKS = ['bluesky', 'x', 'threads', 'mastodon'] as const;

let texts = 0;
/** About 1,150 characters of sentences, each new to the networks (X refuses a text the account posted already). */
function longText(label: string): string {
  const run = ++texts;
  const sentences = Array.from({ length: 19 }, (_, i) => `Sentence ${i + 1} of run ${run} explains one more detail of the ${label}.`);
  const text = sentences.join(' ');
  expect(text.length).toBeGreaterThan(1100);
  expect(text.length).toBeLessThan(1300);
  return text;
}

/** Follows an authorization URL as a browser would after the user approves: to our callback, for JSON. */
async function approve(server: TestServer, authorizationUrl: string) {
  const consent = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(consent.status, await consent.clone().text()).toBe(302);
  const back = new URL(consent.headers.get('location')!);
  return server.request('GET', back.pathname + back.search);
}

/** A brand with a live connection on each chain network, made through REST as a user makes them. */
async function brandOnEveryChainNetwork(server: TestServer) {
  const ws = await server.workspace();
  const b = await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Chains' } });
  const brandId = b.body.id as string;
  const base = `/api/v1/workspaces/${ws.workspace_id}/brands/${brandId}`;
  const opts = (body: Record<string, unknown>) => ({ key: ws.api_key, body });

  const sky = await server.request('POST', `${base}/connections/app-password`, opts({ platform_slug: 'bluesky', identifier: bluesky.account.handle, app_password: bluesky.account.appPassword }));
  expect(sky.status, JSON.stringify(sky.body)).toBe(201);
  const xStart = await server.request('POST', `${base}/connections/oauth`, opts({ platform_slug: 'x' }));
  expect((await approve(server, xStart.body.authorization_url as string)).status).toBe(200);
  const mStart = await server.request('POST', `${base}/connections/oauth`, opts({ platform_slug: 'mastodon', instance: mastodon.origin }));
  expect((await approve(server, mStart.body.authorization_url as string)).status).toBe(200);
  const tStart = await server.request('POST', `${base}/connections/oauth`, opts({ platform_slug: 'threads' }));
  const redirectUri = new URL(tStart.body.authorization_url as string).searchParams.get('redirect_uri')!;
  const code = threads.issueCode(redirectUri);
  const tDone = await server.request('GET', `/api/v1/oauth/networks/threads/callback?code=${encodeURIComponent(code)}&state=${encodeURIComponent(tStart.body.state as string)}`);
  expect(tDone.status, JSON.stringify(tDone.body)).toBe(200);

  const conns = await server.request('GET', `/api/v1/workspaces/${ws.workspace_id}/connections`, { key: ws.api_key });
  const live = (conns.body.data as { platform_slug: string; mode: string; status: string; brand_id: string }[]).filter((c) => c.brand_id === brandId);
  expect(live.map((c) => [c.platform_slug, c.mode, c.status]).sort()).toEqual(CHAIN_NETWORKS.map((p) => [p, 'live', 'active']).sort());
  return { ws, brandId };
}

interface Sent {
  posts: { text: string; replyTo: string | null; id: string }[];
}

/** What each fake received since `mark`, as posts with the id each one replies to. */
function sentSince(mark: Record<(typeof CHAIN_NETWORKS)[number], number>): Record<(typeof CHAIN_NETWORKS)[number], Sent> {
  return {
    bluesky: {
      posts: bluesky.posts.slice(mark.bluesky).map((p) => {
        const reply = p.value.reply as { parent: { uri: string }; root: { uri: string } } | undefined;
        return { id: p.uri, text: p.value.text as string, replyTo: reply?.parent.uri ?? null, root: reply?.root.uri ?? null };
      }),
    },
    x: { posts: x.tweets.slice(mark.x).map((t) => ({ id: t.id, text: t.text, replyTo: t.replyTo })) },
    threads: { posts: threads.posts.slice(mark.threads).map((p) => ({ id: p.id, text: p.text ?? '', replyTo: p.replyToId })) },
    mastodon: { posts: mastodon.statuses.slice(mark.mastodon).map((s) => ({ id: s.id, text: s.text, replyTo: s.inReplyToId })) },
  };
}

const marks = () => ({ bluesky: bluesky.posts.length, x: x.tweets.length, threads: threads.posts.length, mastodon: mastodon.statuses.length });

/** Each network got the text as a chain: several posts, each replying to the one before, that join back into it. */
function expectChains(sent: ReturnType<typeof sentSince>, text: string, limits: Record<(typeof CHAIN_NETWORKS)[number], number>) {
  for (const platform of CHAIN_NETWORKS) {
    const { posts } = sent[platform];
    expect(posts.length, platform).toBeGreaterThanOrEqual(Math.ceil(text.length / limits[platform]));
    expect(posts.map((p) => p.text).join(' '), platform).toBe(text);
    posts.forEach((p, k) => {
      expect([...p.text].length, `${platform} post ${k + 1}`).toBeLessThanOrEqual(limits[platform]);
      expect(p.replyTo, `${platform} post ${k + 1} replies to the one before`).toBe(k === 0 ? null : posts[k - 1]!.id);
    });
  }
  // Bluesky's replies also name the chain's first post as their root (app.bsky.feed.post#replyRef).
  const sky = sent.bluesky.posts as { id: string; root?: string | null }[];
  for (const p of sky.slice(1)) expect(p.root).toBe(sky[0]!.id);
}

const LIMITS = { bluesky: 300, x: 280, threads: 500, mastodon: 500 };

describeEachDb(
  'chains published through the live adapters',
  (server) => {
    it('a long text content with thread_split "auto" is published as a chain on Bluesky, X, Threads and Mastodon', async () => {
      const { ws, brandId } = await brandOnEveryChainNetwork(server());
      const text = longText('long text');
      const mark = marks();
      const created = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, target_platforms: [...CHAIN_NETWORKS], content_type: 'text', text, thread_split: 'auto' },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      await server().settle();
      const content = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${created.body.content_id as string}`, { key: ws.api_key });
      const jobs = content.body.jobs as { platform_slug: string; status: string; error_message: string | null }[];
      expect(jobs.map((j) => [j.platform_slug, j.status, j.error_message]).sort()).toEqual(CHAIN_NETWORKS.map((p) => [p, 'published', null]).sort());
      expect(content.body.status).toBe('published');
      expectChains(sentSince(mark), text, LIMITS);
    });

    it('a thread content given as one text with thread_split "auto" is published as the same chains', async () => {
      const { ws, brandId } = await brandOnEveryChainNetwork(server());
      const text = longText('thread');
      const mark = marks();
      const created = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, target_platforms: [...CHAIN_NETWORKS], content_type: 'thread', text, thread_split: 'auto' },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      await server().settle();
      const content = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${created.body.content_id as string}`, { key: ws.api_key });
      const jobs = content.body.jobs as { platform_slug: string; status: string; error_message: string | null }[];
      expect(jobs.map((j) => [j.platform_slug, j.status, j.error_message]).sort()).toEqual(CHAIN_NETWORKS.map((p) => [p, 'published', null]).sort());
      expectChains(sentSince(mark), text, LIMITS);
    });
  },
  env,
  () => ({ clock: new ManualClock(Date.now()), workers: false }),
);
