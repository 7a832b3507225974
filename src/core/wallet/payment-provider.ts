import { checkSignature } from '../../webhooks/signature.js';
import type { Clock } from '../clock.js';
import { ServiceError, validationError } from '../errors.js';
import { type PaymentEvent, paymentEventSchema } from './wallet.schema.js';

/**
 * A payment provider's callback, reduced to the one fact we act on: an offer was paid for a workspace. A real
 * provider plugs in by implementing this (its own signature scheme and event shape) and being chosen in config.
 */
export interface PaymentProvider {
  /** @throws ServiceError `invalid_request` (bad signature) or `validation_failed` (bad event). */
  parse(headers: (name: string) => string | undefined, rawBody: Buffer): PaymentEvent;
}

/**
 * The built-in provider: the same signature scheme as our own webhooks (`Payment-Timestamp`,
 * `Payment-Signature: sha256=<HMAC(secret, "{timestamp}.{raw body}")>`, 300 s tolerance) over a small JSON event.
 */
export function hmacPaymentProvider(secret: string | undefined, clock: Clock): PaymentProvider {
  return {
    parse(header, rawBody) {
      if (secret === undefined) throw new ServiceError('not_found', 'Payment callbacks are not configured (PAYMENT_WEBHOOK_SECRET).');
      const verdict = checkSignature({
        secret,
        signatureHeader: header('payment-signature') ?? '',
        // The HMAC covers the body's exact bytes: a body that only decodes to the same text must not pass.
        payload: Buffer.concat([Buffer.from(`${header('payment-timestamp') ?? ''}.`, 'utf8'), rawBody]),
        toleranceSeconds: 300,
        nowSeconds: Math.floor(clock.now() / 1000),
      });
      if (!verdict.valid) throw new ServiceError('invalid_request', `The payment callback is not authentic (${verdict.reason?.split(':')[0] ?? 'signature'}).`);
      let json: unknown;
      try {
        json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(rawBody));
      } catch {
        throw new ServiceError('invalid_request', 'The payment callback body is not valid UTF-8 JSON.');
      }
      const event = paymentEventSchema.safeParse(json);
      if (!event.success) throw validationError(event.error, 'body');
      return event.data;
    },
  };
}
