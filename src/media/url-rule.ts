import { isIP } from 'node:net';
import { isPublicAddress } from './safe-fetch.js';

/**
 * The registration-time rule for addresses we will call (webhook endpoints): public HTTPS, no credentials. Names
 * are checked again after DNS at every connection; this catches the obvious mistakes early, with a clear error.
 * Returns null when acceptable, else the problem in words.
 */
export function publicUrlProblem(text: string, allowLocal: boolean): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  if (allowLocal) return url.protocol === 'https:' || url.protocol === 'http:' ? null : 'must be an http(s) URL';
  if (url.protocol !== 'https:') return 'must be a public HTTPS URL';
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) return 'must be a public address';
  if (isIP(host) !== 0 && !isPublicAddress(host)) return 'must be a public address';
  return null;
}
