import { createHmac } from 'node:crypto';
import type { Clock } from '../clock.js';
import { constantTimeEqual } from '../ids.js';

export type PublicMediaLinks = ReturnType<typeof createPublicMediaLinks>;

/**
 * Signed, expiring addresses of uploads. Instagram and Threads download media themselves from a public
 * address; an upload gets one for the time a job needs it, and nobody can list or guess others.
 */
export function createPublicMediaLinks(deps: { secretKey: Buffer; baseUrl: string; clock: Clock; ttlMs: number }) {
  const key = createHmac('sha256', deps.secretKey).update('public-media-links').digest();
  const sign = (mediaId: string, exp: string) => createHmac('sha256', key).update(`${mediaId}.${exp}`).digest('base64url');

  return {
    linkFor(mediaId: string): string {
      const exp = String(Math.ceil((deps.clock.now() + deps.ttlMs) / 1000));
      return `${deps.baseUrl}/media/${encodeURIComponent(mediaId)}?${new URLSearchParams({ exp, sig: sign(mediaId, exp) })}`;
    },

    /** Whether `exp` and `sig` are this service's, for this media, and not past. */
    verify(mediaId: string, exp: string, sig: string): boolean {
      if (!/^\d{1,12}$/.test(exp) || sig.length > 100) return false;
      if (Number(exp) * 1000 <= deps.clock.now()) return false;
      return constantTimeEqual(sig, sign(mediaId, exp));
    },
  };
}
