import type { Confirmation, LiveCredentials, NetworkAdapter, NetworkFailure, NotReady, PublishRequest, Published, Submitted } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { postTexts } from '../kit/post-texts.js';
import { isRecord, str } from '../kit/json.js';
import type { GraphError } from '../meta-graph/errors.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import { classifyContainerError, classifyThreadsError } from './errors.js';
import { threadsGraph } from './graph.js';

/** Status checks within one publish call while a container is IN_PROGRESS, and the pause between them. */
const POLL_CHECKS = 3;
const POLL_PAUSE_MS = 1_000;
/** Threads asks for about one status check a minute; 30 s keeps a text chain moving. */
const RETRY_AFTER_MS = 30_000;
/** Lookups of a post whose container says PUBLISHED before giving up on finding its id. */
const MAX_LOOKUPS = 10;

const later = (retryAfterMs = RETRY_AFTER_MS): NotReady => ({ ok: 'pending', retryAfterMs });
const NO_CREDENTIALS = failure('upstream_unknown', false, 'The connection has no credentials for the network. Reconnect it.');

/**
 * What a publish run saved (PublishRequest.progress): posts 0..index-1 are live with `ids`; `container` is the
 * container of post `index` once created; `publishing` is set just before threads_publish is sent for it, so a
 * run taken over knows that post may be live and looks it up instead of publishing anything again.
 */
interface ChainProgress {
  index: number;
  lastMediaId: string | null;
  ids: string[];
  container: string | null;
  publishing: string | null;
  publishStartedAt: number | null;
  lookups: number;
}

function readProgress(raw: Record<string, unknown> | null, containerId: string): ChainProgress {
  const p = raw ?? {};
  const ids = Array.isArray(p.ids) ? p.ids.filter((x): x is string => typeof x === 'string') : [];
  const strOrNull = (v: unknown) => (typeof v === 'string' ? v : null);
  if (typeof p.index !== 'number' || p.index !== ids.length) {
    return { index: 0, lastMediaId: null, ids: [], container: containerId, publishing: null, publishStartedAt: null, lookups: 0 };
  }
  return {
    index: p.index,
    lastMediaId: ids.at(-1) ?? null,
    ids,
    container: strOrNull(p.container),
    publishing: strOrNull(p.publishing),
    publishStartedAt: typeof p.publishStartedAt === 'number' ? p.publishStartedAt : null,
    lookups: typeof p.lookups === 'number' ? p.lookups : 0,
  };
}

const advance = (p: ChainProgress, mediaId: string): ChainProgress => ({
  index: p.index + 1,
  lastMediaId: mediaId,
  ids: [...p.ids, mediaId],
  container: null,
  publishing: null,
  publishStartedAt: null,
  lookups: 0,
});

/** A failure after some posts of a chain went live says so: they stay live, the rest was never posted. */
function chainFailure(f: NetworkFailure, k: number, n: number): NetworkFailure {
  if (n <= 1 || k === 0) return f;
  const live = k === 1 ? 'post 1 is live' : `posts 1..${k} are live`;
  return { ...f, partlyLive: true, message: `The chain stopped at post ${k + 1} of ${n}; ${live} on the network. ${f.message}` };
}

/** Calls on the Graph API as one account. */
function client(settings: NetworkSettings, deps: NetworkDeps, cred: LiveCredentials) {
  const graph = threadsGraph(settings, deps);
  // GET parameters go in the query, POST parameters in a form body (both as the Graph API documents them).
  const call = (method: 'GET' | 'POST', path: string, params: Record<string, string | null | undefined> = {}) =>
    method === 'GET' ? graph.call({ method, url: graph.url(path, params), token: cred.accessToken }) : graph.call({ method, url: graph.url(path), form: params, token: cred.accessToken });
  const user = encodeURIComponent(cred.accountId);
  return {
    quota: () => call('GET', `${user}/threads_publishing_limit`, { fields: 'quota_usage,config,reply_quota_usage,reply_config' }),
    createContainer: (params: Record<string, string | null>) => call('POST', `${user}/threads`, params),
    status: (container: string) => call('GET', encodeURIComponent(container), { fields: 'status,error_message' }),
    publish: (container: string) => call('POST', `${user}/threads_publish`, { creation_id: container }),
    media: (mediaId: string) => call('GET', encodeURIComponent(mediaId), { fields: 'id,permalink' }),
    ownPostsSince: (sinceSec: number) => call('GET', `${user}/threads`, { fields: 'id,text,timestamp', since: String(sinceSec), limit: '50' }),
    repliesTo: (mediaId: string) => call('GET', `${encodeURIComponent(mediaId)}/replies`, { fields: 'id,text,timestamp,is_reply_owned_by_me' }),
  };
}
type Client = ReturnType<typeof client>;

/** Container parameters of post k (`reply_to_id` chains it under the previous post). */
function containerParams(req: PublishRequest, k: number, replyTo: string | null): { ok: true; params: Record<string, string | null> } | NetworkFailure {
  const text = postTexts(req)[k] ?? '';
  // Only the first post carries the media: the replies of a caption split into a chain are text posts.
  const media = k === 0 ? req.media[0] : undefined;
  const kind = media === undefined ? 'TEXT' : req.contentType === 'photo' ? 'IMAGE' : req.contentType === 'video' || req.contentType === 'reel' ? 'VIDEO' : 'TEXT';
  if (kind === 'TEXT') return { ok: true, params: { media_type: 'TEXT', text, reply_to_id: replyTo } };
  // Threads downloads media itself from a public address (an upload's is its signed address).
  const address = media?.publicUrl ?? media?.url;
  if (!address || !/^https?:\/\//.test(address)) return failure('upstream_unknown', false, 'The media has no public address Threads can download it from.');
  const field = kind === 'IMAGE' ? 'image_url' : 'video_url';
  return { ok: true, params: { media_type: kind, [field]: address, text: text === '' ? null : text, reply_to_id: replyTo } };
}

/** Checks both quotas before anything is created: a chain of n uses 1 post and n-1 replies (spec 8). */
async function checkQuota(api: Client, posts: number): Promise<NetworkFailure | null> {
  const res = await api.quota();
  if (!res.ok) return res.failure;
  const row = Array.isArray(res.data.data) && isRecord(res.data.data[0]) ? res.data.data[0] : null;
  if (!row) return null; // No figures: let the publish call itself be the judge.
  const over = (usage: unknown, config: unknown, need: number) =>
    typeof usage === 'number' && isRecord(config) && typeof config.quota_total === 'number' && usage + need > config.quota_total;
  if (over(row.quota_usage, row.config, 1) || (posts > 1 && over(row.reply_quota_usage, row.reply_config, posts - 1))) return failure('quota_exceeded');
  return null;
}

/** Whether an error leaves the outcome of a sent publish unknown (then we look it up later, never re-send blindly). */
const unsure = (e: GraphError) => classifyThreadsError(e).failure.code === 'upstream_5xx';

/** Finds the media id of post k whose container says PUBLISHED but whose publish answer was lost. */
async function findPublished(api: Client, p: ChainProgress, text: string): Promise<string | null> {
  const wanted = text.trim();
  if (p.lastMediaId === null) {
    const sinceSec = Math.floor((p.publishStartedAt ?? 0) / 1000) - 300;
    const res = await api.ownPostsSince(sinceSec);
    const list = res.ok && Array.isArray(res.data.data) ? res.data.data.filter(isRecord) : [];
    const post = list.find((m) => (str(m.text) ?? '').trim() === wanted); // newest first
    return post ? str(post.id) : null;
  }
  const res = await api.repliesTo(p.lastMediaId);
  const list = res.ok && Array.isArray(res.data.data) ? res.data.data.filter(isRecord) : [];
  const mine = list.find((m) => m.is_reply_owned_by_me === true && (str(m.text) ?? '').trim() === wanted);
  return mine ? str(mine.id) : null;
}

/** Asks for the container's status a few times while it is IN_PROGRESS (a short poll, never minutes). */
async function pollStatus(api: Client, deps: NetworkDeps, container: string) {
  for (let check = 1; ; check++) {
    const res = await api.status(container);
    if (!res.ok) return res;
    const status = str(res.data.status) ?? 'UNKNOWN';
    if (status !== 'IN_PROGRESS' || check >= POLL_CHECKS) return { ok: true as const, status, errorMessage: str(res.data.error_message) };
    await deps.sleep(POLL_PAUSE_MS);
  }
}

/**
 * The Threads adapter (graph.threads.net). `submit` checks both quotas and creates the first container;
 * `publish` publishes post after post, each next container replying to the previous post, saving progress
 * before and after every threads_publish so a run taken over continues where the last one stopped. A publish
 * whose answer was lost is looked up (container PUBLISHED → find the post) and never sent again blindly.
 */
export function createThreadsAdapter(settings: NetworkSettings, deps: NetworkDeps): NetworkAdapter {
  return {
    async submit(req): Promise<Submitted> {
      if (!req.credentials) return NO_CREDENTIALS;
      const api = client(settings, deps, req.credentials);
      const quota = await checkQuota(api, postTexts(req).length);
      if (quota) return quota;
      const params = containerParams(req, 0, null);
      if (!params.ok) return params;
      const made = await api.createContainer(params.params);
      if (!made.ok) return made.failure;
      const id = str(made.data.id);
      return id ? { ok: true, containerId: id } : failure('upstream_unknown');
    },

    async publish(req, containerId): Promise<Published> {
      if (!req.credentials) return NO_CREDENTIALS;
      const api = client(settings, deps, req.credentials);
      const texts = postTexts(req);
      const n = texts.length;
      let p = readProgress(req.progress, containerId);
      const save = async (next: ChainProgress) => {
        p = next;
        return req.saveProgress({ ...next });
      };
      // A lost lease means another worker owns the job now: stop without touching anything.
      const LEASE_LOST = later();

      while (p.index < n) {
        const k = p.index;
        const stop = (f: NetworkFailure) => chainFailure(f, k, n);
        let container = p.container;
        if (container === null) {
          // Not public yet: recorded only so a run taken over does not leave another orphan container.
          const params = containerParams(req, k, p.lastMediaId);
          if (!params.ok) return stop(params);
          const made = await api.createContainer(params.params);
          if (!made.ok) return stop(made.failure);
          container = str(made.data.id);
          if (!container) return stop(failure('upstream_unknown'));
          if (!(await save({ ...p, container }))) return LEASE_LOST;
        }
        const st = await pollStatus(api, deps, container);
        if (!st.ok) return p.publishing !== null && unsure(st.error) ? later() : stop(st.failure);

        if (st.status === 'IN_PROGRESS') return later();
        if (st.status === 'ERROR') return stop(classifyContainerError(st.errorMessage));
        if (st.status === 'EXPIRED') {
          // Never published (that would read PUBLISHED): a fresh container for the same post is safe.
          if (!(await save({ ...p, container: null, publishing: null }))) return LEASE_LOST;
          continue;
        }
        if (st.status === 'PUBLISHED') {
          const mediaId = await findPublished(api, p, texts[k] ?? '');
          if (mediaId === null) {
            if (p.lookups + 1 >= MAX_LOOKUPS) {
              return stop(failure('upstream_unknown', false, `Threads reports post ${k + 1} as published but it could not be found. It may be live: check before republishing.`));
            }
            return (await save({ ...p, lookups: p.lookups + 1 })) ? later() : LEASE_LOST;
          }
          if (!(await save(advance(p, mediaId)))) return LEASE_LOST;
          continue;
        }
        if (st.status !== 'FINISHED') return stop(failure('upstream_unknown'));

        // The public step: recorded before, so a run taken over looks the post up instead of publishing again.
        if (!(await save({ ...p, publishing: container, publishStartedAt: deps.now() }))) return LEASE_LOST;
        const pub = await api.publish(container);
        if (!pub.ok) return unsure(pub.error) ? later() : stop(pub.failure);
        const mediaId = str(pub.data.id);
        if (!mediaId) return later(); // Published or not, the container's status will tell on the next call.
        if (!(await save(advance(p, mediaId)))) return LEASE_LOST;
      }

      const first = p.ids[0];
      if (first === undefined) return failure('upstream_unknown');
      // The chain's URL is the first post's permalink; a failed lookup here leaves it to confirm().
      const media = await api.media(first);
      const url = media.ok ? str(media.data.permalink) : null;
      return url ? { ok: true, postId: first, url } : { ok: true, postId: first };
    },

    async confirm(req, postId): Promise<Confirmation> {
      if (!req.credentials) return { state: 'unavailable' };
      const res = await client(settings, deps, req.credentials).media(postId);
      if (res.ok) {
        const url = str(res.data.permalink);
        // Threads omits the permalink of posts flagged for copyright: not confirmable yet.
        return url ? { state: 'found', url } : { state: 'pending' };
      }
      const e = res.error;
      if (e.status === 404 || (e.code === 100 && e.subcode === 33)) return { state: 'not_found' };
      return { state: 'unavailable' };
    },
  };
}
