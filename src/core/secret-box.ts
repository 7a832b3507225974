import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM for secrets we must be able to read back (webhook signing secrets, network tokens). The sealed
 * form is `v1.<iv>.<tag>.<ciphertext>` in base64url; the version leaves room for key rotation.
 */
export function seal(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
}

/** @throws Error when the value was not sealed with this key or was altered. */
export function open(key: Buffer, sealed: string): string {
  const [version, iv, tag, ciphertext] = sealed.split('.');
  if (version !== 'v1' || iv === undefined || tag === undefined || ciphertext === undefined) throw new Error('not a sealed value');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}

/**
 * A key for one purpose, derived from the service's secret (HMAC-SHA256 of the purpose's name), so CSRF tokens,
 * signed media links and cookies never share a key with each other or with `seal`.
 */
export function deriveKey(secretKey: Buffer, purpose: string): Buffer {
  return createHmac('sha256', secretKey).update(purpose).digest();
}

/** HMAC-SHA256 of `text` under `key`, base64url: tokens that prove we issued them. */
export function sign(key: Buffer, text: string): string {
  return createHmac('sha256', key).update(text).digest('base64url');
}
