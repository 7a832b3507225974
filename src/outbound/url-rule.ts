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
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const local = host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal') || (isIP(host) !== 0 && !isPublicAddress(host));
  // A local receiver is usually someone testing on their own machine: say how the operator allows that.
  if (local && (url.protocol === 'https:' || url.protocol === 'http:')) return `must be a public address; ${LOCAL_HINT}`;
  if (url.protocol !== 'https:') return 'must be a public HTTPS URL';
  return null;
}

/** How local receivers are allowed, for a refusal of one. */
const LOCAL_HINT =
  'a receiver on this machine or a private network is accepted only when the service is started with ALLOW_LOCAL_URLS=true, which is meant for testing';
