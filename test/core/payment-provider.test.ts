import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { ServiceError } from '../../src/core/errors.js';
import { hmacPaymentProvider } from '../../src/core/wallet/payment-provider.js';

const SECRET = 'pay_secret';
const NOW = 1_800_000_000_000;

function sign(ts: string, body: Buffer): string {
  return `sha256=${createHmac('sha256', SECRET).update(Buffer.concat([Buffer.from(`${ts}.`), body])).digest('hex')}`;
}

describe('payment callback signature', () => {
  const provider = hmacPaymentProvider(SECRET, new ManualClock(NOW));
  const ts = String(NOW / 1000);
  const headers = (sig: string) => (name: string) => ({ 'payment-timestamp': ts, 'payment-signature': sig })[name];
  const event = { event_id: 'evt_pay_1', type: 'payment.succeeded', workspace_id: 'ws_1', offer_id: 'pack_100' };

  it('accepts the exact bytes it signed', () => {
    const body = Buffer.from(JSON.stringify(event));
    expect(provider.parse(headers(sign(ts, body)), body)).toEqual(event);
  });

  it('checks the bytes, not their decoded text: a body that decodes to the same text is refused', () => {
    // Both bodies decode to the same string (each invalid byte becomes U+FFFD), so an HMAC over text would pass.
    const signed = Buffer.concat([Buffer.from('{"x":"'), Buffer.from([0xff]), Buffer.from('"}')]);
    const other = Buffer.concat([Buffer.from('{"x":"'), Buffer.from([0xfe]), Buffer.from('"}')]);
    expect(signed.toString('utf8')).toBe(other.toString('utf8'));
    const refused = (() => {
      try {
        provider.parse(headers(sign(ts, signed)), other);
        return null;
      } catch (err) {
        return err;
      }
    })();
    expect(refused).toBeInstanceOf(ServiceError);
    expect((refused as ServiceError).code).toBe('invalid_request');
    expect((refused as ServiceError).message).toContain('not authentic');
  });
});
