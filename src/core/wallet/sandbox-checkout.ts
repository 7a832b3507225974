import { signPayload } from '../../webhooks/signature.js';
import type { Clock } from '../clock.js';
import { ServiceError } from '../errors.js';
import { deriveKey } from '../secret-box.js';
import type { Principal } from '../principal.js';
import type { PaymentProvider } from './payment-provider.js';
import type { WalletService } from './wallet.service.js';

type Offer = ReturnType<WalletService['offers']>['data'][number];

/**
 * The key the sandbox checkout signs its payment events with when the operator set no PAYMENT_WEBHOOK_SECRET:
 * derived from SECRET_KEY, so only this service can sign them.
 */
export function sandboxPaymentSecret(secretKey: Buffer): string {
  return deriveKey(secretKey, 'sandbox-payments').toString('hex');
}

/** A checkout id of the page's form: it makes one click one payment, however often the form is sent. */
const CHECKOUT_ID = /^[A-Za-z0-9_-]{16,64}$/;

export type SandboxCheckout = ReturnType<typeof createSandboxCheckout>;

/**
 * The built-in checkout of a default install, so a payment link never leads nowhere. No money moves: "paying" builds the event a
 * provider would send (`payment.succeeded` for this workspace and offer), signs it as a provider does and hands it
 * to the same provider parser and `applyPayment` as `POST /v1/payments/callback`. The app turns it on only while
 * PAYMENT_URL_TEMPLATE is unset, so an install with a real provider never grants credits this way.
 */
export function createSandboxCheckout(deps: { secret: string; clock: Clock; provider: PaymentProvider; wallet: WalletService }) {
  const { secret, clock, provider, wallet } = deps;

  function offer(principal: Principal, workspaceId: string, offerId: string): Offer {
    const found = wallet.offers(principal, workspaceId).data.find((o) => o.id === offerId);
    if (!found) throw new ServiceError('not_found', `There is no credit package ${offerId} on sale.`);
    return found;
  }

  return {
    /**
     * The offer a checkout page shows.
     * @throws ServiceError `forbidden` (another workspace), `not_found` (no such offer).
     */
    offer,

    /**
     * Grants the offer's credits through the signed callback path. `checkoutId` (from the page) makes the event id,
     * so sending one form twice adds the credits once; `applied` is false the second time.
     * @throws ServiceError `forbidden`, `not_found`, `validation_failed` (checkout id).
     */
    async pay(principal: Principal, workspaceId: string, offerId: string, checkoutId: string): Promise<{ applied: boolean; offer: Offer }> {
      const chosen = offer(principal, workspaceId, offerId);
      if (!CHECKOUT_ID.test(checkoutId)) {
        throw new ServiceError('validation_failed', 'checkout_id: reload the checkout page and pay again', { fields: [{ path: 'checkout_id', message: 'is not a checkout of this page' }] });
      }
      const body = Buffer.from(JSON.stringify({ event_id: `sandbox_${workspaceId}_${checkoutId}`, type: 'payment.succeeded', workspace_id: workspaceId, offer_id: chosen.id }), 'utf8');
      const timestamp = String(Math.floor(clock.now() / 1000));
      const headers: Record<string, string> = { 'payment-timestamp': timestamp, 'payment-signature': signPayload(secret, Buffer.concat([Buffer.from(`${timestamp}.`), body])) };
      const event = provider.parse((name) => headers[name], body);
      const applied = await wallet.applyPayment({ eventId: event.event_id, workspaceId: event.workspace_id, offerId: event.offer_id });
      return { applied, offer: chosen };
    },
  };
}
