import { createHmac } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkSignature, signPayload, verifyWebhook } from '../../src/webhooks/signature.js';

/**
 * The receiver-side helper exported as `multi-network-publisher/webhooks` (spec 6.3 item 3): the HMAC covers the
 * raw body as received, byte for byte, not a decoded copy of it.
 */

const secret = 'whsec_test_secret';
const now = new Date(Date.UTC(2026, 0, 1, 12));
const ts = String(Math.floor(now.getTime() / 1000));

/** An HMAC computed here, independently of the module under test, over the exact bytes. */
function sign(bytes: Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(Buffer.concat([Buffer.from(`${ts}.`), bytes])).digest('hex')}`;
}

describe('verifyWebhook over raw bytes', () => {
  // 0xff and 0xfe are both invalid UTF-8: each decodes to U+FFFD, so the two bodies decode to the same string.
  const a = Buffer.from([0x7b, 0xff, 0x7d]);
  const b = Buffer.from([0x7b, 0xfe, 0x7d]);

  it('a Buffer body is checked byte for byte: a different body that decodes to the same text is refused', () => {
    expect(a.toString('utf8')).toBe(b.toString('utf8'));
    const headers = { 'service-timestamp': ts, 'service-signature': sign(a) };
    expect(verifyWebhook({ secret, headers, rawBody: a, now }).valid).toBe(true);
    const forged = verifyWebhook({ secret, headers, rawBody: b, now });
    expect(forged.valid).toBe(false);
    expect(forged.checks).toEqual({ signature_format: true, timestamp_within_tolerance: true, hmac_matches: false });
  });

  it('a signature made over the decoded text does not match the raw bytes it came from', () => {
    const overDecoded = signPayload(secret, `${ts}.${a.toString('utf8')}`);
    expect(verifyWebhook({ secret, headers: { 'service-timestamp': ts, 'service-signature': overDecoded }, rawBody: a, now }).valid).toBe(false);
  });

  it('a string body is still accepted and checked as its UTF-8 bytes; string and Buffer give the same verdict for valid UTF-8', () => {
    const body = '{"id":"evt_1","text":"olá 🌍"}';
    const headers = new Headers({ 'service-timestamp': ts, 'service-signature': sign(Buffer.from(body, 'utf8')) });
    expect(verifyWebhook({ secret, headers, rawBody: body, now }).valid).toBe(true);
    expect(verifyWebhook({ secret, headers, rawBody: Buffer.from(body, 'utf8'), now }).valid).toBe(true);
    expect(verifyWebhook({ secret, headers, rawBody: `${body} `, now }).valid).toBe(false);
  });

  it('the timestamp check reads the bytes before the first dot of a Buffer payload', () => {
    const payload = Buffer.concat([Buffer.from(`${ts}.`), a]);
    const ok = checkSignature({ secret, signatureHeader: sign(a), payload, toleranceSeconds: 300, nowSeconds: Number(ts) + 299 });
    expect(ok.valid).toBe(true);
    const stale = checkSignature({ secret, signatureHeader: sign(a), payload, toleranceSeconds: 300, nowSeconds: Number(ts) + 301 });
    expect(stale.checks.timestamp_within_tolerance).toBe(false);
    expect(stale.reason).toMatch(/^timestamp_within_tolerance: the timestamp is 301 s from now/);
    const noStamp = checkSignature({ secret, signatureHeader: sign(a), payload: a, toleranceSeconds: 300, nowSeconds: Number(ts) });
    expect(noStamp.checks.timestamp_within_tolerance).toBe(false);
  });

  it('signPayload signs a Buffer as its bytes and a string as its UTF-8 encoding', () => {
    const text = `${ts}.{"a":"é"}`;
    expect(signPayload(secret, text)).toBe(signPayload(secret, Buffer.from(text, 'utf8')));
    expect(signPayload(secret, Buffer.concat([Buffer.from(`${ts}.`), a]))).toBe(sign(a));
  });
});

describe('the package export', () => {
  it('`multi-network-publisher/webhooks` compiles from this module (types and code)', () => {
    const root = new URL('../../', import.meta.url);
    const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { exports: Record<string, { types: string; default: string }> };
    const entry = pkg.exports['./webhooks']!;
    // tsc -b (tsconfig.build.json) writes src/x.ts to dist/src/x.js and dist/src/x.d.ts.
    expect(entry.default.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts')).toBe('src/webhooks/signature.ts');
    expect(entry.types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts')).toBe('src/webhooks/signature.ts');
    expect(existsSync(new URL('src/webhooks/signature.ts', root))).toBe(true);
  });
});
