import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signatures (spec 6.3): `Service-Signature: sha256=<hex HMAC-SHA256(secret, "{timestamp}.{raw body}")>`
 * with `Service-Timestamp` in Unix seconds. This module has no dependency on the rest of the service, so
 * integrators can copy it or import it from the package (`multi-network-publisher/webhooks`).
 */

export const SIGNATURE_FORMAT = /^sha256=[0-9a-f]{64}$/;

/**
 * The `sha256=…` header value for `payload` (`{timestamp}.{raw body}`). A string is signed as its UTF-8 bytes; a
 * Buffer is signed byte for byte, so a body that is not valid UTF-8 is never replaced by what it decodes to.
 */
export function signPayload(secret: string, payload: string | Buffer): string {
  const hmac = createHmac('sha256', secret);
  if (typeof payload === 'string') hmac.update(payload, 'utf8');
  else hmac.update(payload);
  return `sha256=${hmac.digest('hex')}`;
}

export interface SignatureChecks {
  signature_format: boolean;
  timestamp_within_tolerance: boolean;
  hmac_matches: boolean;
}

export interface SignatureVerdict {
  valid: boolean;
  checks: SignatureChecks;
  /** null when valid; otherwise names the first failed check and why. */
  reason: string | null;
}

/**
 * Checks a signature header against `payload` (`{timestamp}.{raw body}`; the timestamp is the part before the
 * first dot). Given a Buffer, the HMAC covers those exact bytes (spec 6.3 item 3 signs the body as sent).
 * Comparison is constant-time. Never throws.
 */
export function checkSignature(args: { secret: string; signatureHeader: string; payload: string | Buffer; toleranceSeconds: number; nowSeconds: number }): SignatureVerdict {
  const formatOk = SIGNATURE_FORMAT.test(args.signatureHeader);
  const dot = args.payload.indexOf('.');
  // The timestamp is ASCII digits, so reading its bytes as latin1 cannot turn anything else into a digit.
  const stampText = dot < 0 ? '' : typeof args.payload === 'string' ? args.payload.slice(0, dot) : args.payload.subarray(0, dot).toString('latin1');
  const stamp = /^\d{1,12}$/.test(stampText) ? Number(stampText) : Number.NaN;
  const timeOk = Number.isFinite(stamp) && Math.abs(args.nowSeconds - stamp) <= args.toleranceSeconds;
  const expected = Buffer.from(signPayload(args.secret, args.payload), 'utf8');
  const given = Buffer.from(args.signatureHeader, 'utf8');
  const hmacOk = formatOk && given.length === expected.length && timingSafeEqual(given, expected);

  const checks: SignatureChecks = { signature_format: formatOk, timestamp_within_tolerance: timeOk, hmac_matches: hmacOk };
  let reason: string | null = null;
  if (!formatOk) reason = 'signature_format: the signature must be sha256= followed by 64 lowercase hex characters';
  else if (!timeOk) {
    reason = Number.isFinite(stamp)
      ? `timestamp_within_tolerance: the timestamp is ${Math.abs(args.nowSeconds - stamp)} s from now; the tolerance is ${args.toleranceSeconds} s`
      : 'timestamp_within_tolerance: the payload must start with the Unix timestamp and a dot';
  } else if (!hmacOk) reason = 'hmac_matches: the signature does not match this secret and payload';
  return { valid: reason === null, checks, reason };
}

/**
 * For receivers: verifies a delivery from its headers and the raw body exactly as received (before any JSON
 * parsing). Pass the body as the Buffer read from the socket: its bytes are what is checked, never a decoded
 * copy (two different byte sequences can decode to the same string). A string is accepted too and checked as its
 * UTF-8 bytes. `headers` may be Node's lower-cased header object or a fetch `Headers`.
 */
export function verifyWebhook(args: {
  secret: string;
  headers: Record<string, string | string[] | undefined> | Headers;
  rawBody: string | Buffer;
  toleranceSeconds?: number;
  now?: Date;
}): SignatureVerdict {
  const get = (name: string): string => {
    if (args.headers instanceof Headers) return args.headers.get(name) ?? '';
    const value = args.headers[name] ?? args.headers[name.toLowerCase()];
    return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
  };
  const prefix = `${get('service-timestamp')}.`;
  const payload = typeof args.rawBody === 'string' ? `${prefix}${args.rawBody}` : Buffer.concat([Buffer.from(prefix, 'utf8'), args.rawBody]);
  return checkSignature({
    secret: args.secret,
    signatureHeader: get('service-signature'),
    payload,
    toleranceSeconds: args.toleranceSeconds ?? 300,
    nowSeconds: Math.floor((args.now ?? new Date()).getTime() / 1000),
  });
}
