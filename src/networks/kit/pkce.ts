import { createHash, createHmac } from 'node:crypto';

/**
 * PKCE (RFC 7636, S256) without storing a verifier: the verifier is an HMAC of our single-use `state` under the
 * client secret, so the callback, which receives `state` back, derives the same verifier. It never travels on
 * the front channel (only its hash does), which is what PKCE asks.
 */
export function pkceFor(clientSecret: string, state: string): { verifier: string; challenge: string } {
  const verifier = createHmac('sha256', clientSecret).update(`pkce:${state}`).digest('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}
