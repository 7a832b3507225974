import { deriveKey, sign } from '../secret-box.js';
import type { Clock } from '../clock.js';
import { constantTimeEqual } from '../ids.js';

/** Signed, expiring addresses of uploads, from the service itself (local disk) or from the bucket (S3). */
export interface PublicMediaLinks {
  /** An address anyone holding it can download the upload from, until it expires. */
  linkFor(mediaId: string): string;
  /** Whether `exp` and `sig` are this service's own, for this media, and not past (its /media route). */
  verify(mediaId: string, exp: string, sig: string): boolean;
}

/**
 * Signed, expiring addresses of uploads. Instagram and Threads download media themselves from a public
 * address; an upload gets one for the time a job needs it, and nobody can list or guess others.
 */
export function createPublicMediaLinks(deps: { secretKey: Buffer; baseUrl: string; clock: Clock; ttlMs: number }): PublicMediaLinks {
  const key = deriveKey(deps.secretKey, 'public-media-links');
  const signLink = (mediaId: string, exp: string) => sign(key, `${mediaId}.${exp}`);

  return {
    linkFor(mediaId: string): string {
      const exp = String(Math.ceil((deps.clock.now() + deps.ttlMs) / 1000));
      return `${deps.baseUrl}/media/${encodeURIComponent(mediaId)}?${new URLSearchParams({ exp, sig: signLink(mediaId, exp) })}`;
    },

    verify(mediaId: string, exp: string, sig: string): boolean {
      if (!/^\d{1,12}$/.test(exp) || sig.length > 100) return false;
      if (Number(exp) * 1000 <= deps.clock.now()) return false;
      return constantTimeEqual(sig, signLink(mediaId, exp));
    },
  };
}
