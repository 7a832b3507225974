import { createHash, createHmac } from 'node:crypto';

export interface S3Location {
  bucket: string;
  region: string;
  /** An S3-compatible server's address; AWS's regional endpoint when undefined. */
  endpoint: string | undefined;
  /** `endpoint/bucket/key` instead of `bucket.endpoint/key` (most S3-compatible servers want it). */
  forcePathStyle: boolean;
}

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
}

/** RFC 3986 encoding as SigV4 wants it (encodeURIComponent leaves !'()* alone). */
function encode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

/** The object's address without a signature (virtual-hosted or path style, as the SDK builds it). */
export function objectUrl(location: S3Location, key: string): URL {
  const base = new URL(location.endpoint ?? `https://s3.${location.region}.amazonaws.com`);
  const path = key.split('/').map(encode).join('/');
  const prefix = base.pathname.replace(/\/+$/, '');
  if (location.forcePathStyle) return new URL(`${base.protocol}//${base.host}${prefix}/${encode(location.bucket)}/${path}`);
  return new URL(`${base.protocol}//${location.bucket}.${base.host}${prefix}/${path}`);
}

/**
 * A presigned GET address of an object (AWS Signature Version 4, query form), computed synchronously so that a
 * job's request can carry it without waiting: the same address `@aws-sdk/s3-request-presigner` gives for a
 * GetObjectCommand signed at `now` (a test holds them equal). `expiresSeconds` is at most a week (S3's limit).
 */
export function presignGetObject(location: S3Location, credentials: S3Credentials, key: string, now: number, expiresSeconds: number): string {
  const url = objectUrl(location, key);
  const amzDate = new Date(Math.floor(now / 1000) * 1000).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const scope = `${day}/${location.region}/s3/aws4_request`;
  const query: [string, string][] = [
    ['X-Amz-Algorithm', 'AWS4-HMAC-SHA256'],
    ['X-Amz-Content-Sha256', 'UNSIGNED-PAYLOAD'],
    ['X-Amz-Credential', `${credentials.accessKeyId}/${scope}`],
    ['X-Amz-Date', amzDate],
    ['X-Amz-Expires', String(Math.min(604_800, Math.max(1, Math.floor(expiresSeconds))))],
    ['X-Amz-SignedHeaders', 'host'],
    ['x-id', 'GetObject'],
  ];
  if (credentials.sessionToken) query.push(['X-Amz-Security-Token', credentials.sessionToken]);
  const canonical = (pairs: [string, string][]) =>
    pairs
      .map(([k, v]) => [encode(k), encode(v)] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${k}=${v}`)
      .join('&');
  const canonicalQuery = canonical(query);
  const canonicalRequest = ['GET', url.pathname, canonicalQuery, `host:${url.host}`, '', 'host', 'UNSIGNED-PAYLOAD'].join('\n');
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, day), location.region), 's3'), 'aws4_request');
  const signature = createHmac('sha256', signingKey).update(toSign).digest('hex');
  return `${url.origin}${url.pathname}?${canonical([...query, ['X-Amz-Signature', signature]])}`;
}
