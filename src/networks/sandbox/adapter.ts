import type { JobErrorCode } from '../../vocabulary/job-errors.js';
import { PLATFORMS } from '../../vocabulary/platforms.js';
import type { Confirmation, NetworkAdapter, PublishRequest, Published, Submitted } from '../adapter.js';
import { failure } from '../kit/failure.js';
import type { NetworkDeps } from '../network-deps.js';

/**
 * The sandbox network's own storage: containers and the posts made from them. Injected (the container wires
 * db/repositories/sandbox.repo.ts into it), so the adapter, like every live one, touches no database itself.
 */
export interface SandboxStore {
  insertContainer(id: string, jobId: string, now: number): Promise<void>;
  /** Publishes a container at most once: a second call returns the post made by the first. */
  publishContainer(row: { id: string; containerId: string; jobId: string; connectionId: string; platformSlug: string; now: number }): Promise<string>;
  postExists(id: string): Promise<boolean>;
}

export interface SandboxOptions {
  store: SandboxStore;
  /** Makes a prefixed random id (the core's `newId`), for containers and posts. */
  newId(prefix: string): string;
  /** Mean pause per call, so the sandbox feels like a network; 0 in tests. */
  delayMs: number;
}

/** Failures the sandbox raises when the container is created (the network refuses the request itself). */
const SUBMIT_FAILURES = new Set<string>(['token_expired', 'permission_revoked', 'media_unsupported_format', 'media_too_large', 'quota_exceeded', 'upstream_unknown']);

/** A public-looking post URL in each network's own shape. */
function postUrl(platform: PublishRequest['platform'], postId: string): string {
  const code = postId.replace(/^sbx_/, '');
  switch (platform) {
    case 'instagram':
      return `${PLATFORMS.instagram.postUrlBase}${code.slice(0, 11)}/`;
    case 'facebook':
      return `${PLATFORMS.facebook.postUrlBase}sandbox/posts/${code}`;
    case 'threads':
      return `${PLATFORMS.threads.postUrlBase}${code.slice(0, 11)}`;
    case 'youtube':
      return `${PLATFORMS.youtube.postUrlBase}${code.slice(0, 11)}`;
    case 'linkedin':
      return `${PLATFORMS.linkedin.postUrlBase}urn:li:share:${code}/`;
    case 'x':
      return `${PLATFORMS.x.postUrlBase}${code}`;
    case 'bluesky':
      return `${PLATFORMS.bluesky.postUrlBase}sandbox.bsky.social/post/${code.slice(0, 13)}`;
    case 'mastodon':
      return `${PLATFORMS.mastodon.postUrlBase}sandbox/${code}`;
    case 'tiktok':
      return `${PLATFORMS.tiktok.postUrlBase}sandbox/video/${code}`;
    case 'pinterest':
      return `${PLATFORMS.pinterest.postUrlBase}${code}/`;
  }
}

/**
 * The sandbox network: every platform, the real limits (checked before a job exists), small delays, posts kept
 * in its own table so tests can count them, and outcomes forced per job with `sandbox_outcomes`.
 */
export function createSandboxAdapter(deps: Pick<NetworkDeps, 'now' | 'sleep'>, options: SandboxOptions): NetworkAdapter {
  const { store, newId, delayMs } = options;
  const pause = () => (delayMs > 0 ? deps.sleep(Math.round(delayMs * (0.5 + Math.random()))) : Promise.resolve());

  return {
    async submit(req): Promise<Submitted> {
      await pause();
      const outcome = req.sandboxOutcome ?? 'published';
      if (SUBMIT_FAILURES.has(outcome)) return failure(outcome as JobErrorCode);
      if (outcome === 'upstream_5xx') return failure('upstream_5xx', true);
      if (outcome === 'upstream_5xx_then_published' && req.attempt <= 1) return failure('upstream_5xx', true);
      const containerId = newId('sbxc_');
      await store.insertContainer(containerId, req.jobId, deps.now());
      return { ok: true, containerId };
    },

    async publish(req, containerId): Promise<Published> {
      await pause();
      const postId = await store.publishContainer({
        id: newId('sbx_'),
        containerId,
        jobId: req.jobId,
        connectionId: req.connection.id,
        platformSlug: req.platform,
        now: deps.now(),
      });
      return { ok: true, postId };
    },

    async confirm(req, postId, context): Promise<Confirmation> {
      await pause();
      switch (req.sandboxOutcome ?? 'published') {
        case 'confirmacao_esgotada':
          return { state: 'pending' };
        case 'confirmacao_indisponivel':
          return { state: 'unavailable' };
        case 'post_inexistente':
          return { state: 'not_found' };
        case 'late_confirmation':
          if (!context.late) return { state: 'pending' };
          break;
        default:
          break;
      }
      return (await store.postExists(postId)) ? { state: 'found', url: postUrl(req.platform, postId) } : { state: 'not_found' };
    },
  };
}
