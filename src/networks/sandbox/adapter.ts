import type { Kysely } from 'kysely';
import { insertSandboxContainer, publishSandboxContainer, sandboxPostExists } from '../../../db/repositories/sandbox.repo.js';
import type { Database } from '../../../db/schema.js';
import type { Clock } from '../../core/clock.js';
import { JOB_ERROR_MESSAGES, type JobErrorCode } from '../../vocabulary/job-errors.js';
import { newId } from '../../core/ids.js';
import type { Confirmation, NetworkAdapter, NetworkFailure, PublishRequest, Published, Submitted } from '../adapter.js';
import { PLATFORMS } from '../../vocabulary/platforms.js';

/** Failures the sandbox raises when the container is created (the network refuses the request itself). */
const SUBMIT_FAILURES = new Set<string>(['token_expired', 'permission_revoked', 'media_unsupported_format', 'media_too_large', 'quota_exceeded', 'upstream_unknown']);

function fail(code: JobErrorCode, retryable = false): NetworkFailure {
  return { ok: false, code, retryable, message: JOB_ERROR_MESSAGES[code] };
}

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
  }
}

/**
 * The sandbox network: every platform, the real limits (checked before a job exists), small delays, posts kept
 * in its own table so tests can count them, and outcomes forced per job with `sandbox_outcomes`.
 */
export function createSandboxAdapter(deps: { db: Kysely<Database>; clock: Clock; delayMs: number }): NetworkAdapter {
  const { db, clock } = deps;
  const pause = () => (deps.delayMs > 0 ? new Promise<void>((r) => setTimeout(r, Math.round(deps.delayMs * (0.5 + Math.random())))) : Promise.resolve());

  return {
    async submit(req): Promise<Submitted> {
      await pause();
      const outcome = req.sandboxOutcome ?? 'published';
      if (SUBMIT_FAILURES.has(outcome)) return fail(outcome as JobErrorCode);
      if (outcome === 'upstream_5xx') return fail('upstream_5xx', true);
      if (outcome === 'upstream_5xx_then_published' && req.attempt <= 1) return fail('upstream_5xx', true);
      const containerId = newId('sbxc_');
      await insertSandboxContainer(db, containerId, req.jobId, clock.now());
      return { ok: true, containerId };
    },

    async publish(req, containerId): Promise<Published> {
      await pause();
      const postId = await publishSandboxContainer(db, {
        id: newId('sbx_'),
        containerId,
        jobId: req.jobId,
        connectionId: req.connection.id,
        platformSlug: req.platform,
        now: clock.now(),
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
      return (await sandboxPostExists(db, postId)) ? { state: 'found', url: postUrl(req.platform, postId) } : { state: 'not_found' };
    },
  };
}
