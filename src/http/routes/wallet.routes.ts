import { z } from 'zod';
import { ServiceError } from '../../core/errors.js';
import type { PaymentProvider } from '../../core/wallet/payment-provider.js';
import { offerListSchema, priceQuerySchema, priceSchema, statementQuerySchema, statementSchema } from '../../core/wallet/wallet.schema.js';
import type { WalletService } from '../../core/wallet/wallet.service.js';
import { defineRoute } from '../route.js';
import { workspaceParams } from './common.js';

const MAX_CALLBACK_BYTES = 64 * 1024;

async function readBytes(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    size += buf.length;
    if (size > MAX_CALLBACK_BYTES) throw new ServiceError('payload_too_large', 'The callback body is larger than the service accepts.');
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

export function walletRoutes(wallet: WalletService, payments: PaymentProvider) {
  return [
    defineRoute({
      operationId: 'getWalletPrice',
      method: 'get',
      path: '/v1/workspaces/{wsId}/wallet/preco',
      tag: 'Wallet',
      summary: 'Price of an operation',
      description: 'Consult before a credit-spending request. Operations: publicacao, criacao_de_conteudo. One without a published price answers 402 operacao_sem_preco (it is never free by omission).',
      auth: 'bearer',
      params: workspaceParams,
      query: priceQuerySchema,
      success: { status: 200, description: 'The price and what it would cost now.', schema: priceSchema },
      errors: ['operacao_sem_preco'],
      handle: ({ principal, params, query }) => wallet.price(principal, params.wsId, query),
    }),
    defineRoute({
      operationId: 'getWallet',
      method: 'get',
      path: '/v1/workspaces/{wsId}/wallet',
      tag: 'Wallet',
      summary: 'Wallet statement',
      description: 'Balance, credit batches (lotes) with their expiry, and the ledger newest first (cursor-paginated).',
      auth: 'bearer',
      params: workspaceParams,
      query: statementQuerySchema,
      success: { status: 200, description: 'The statement.', schema: statementSchema },
      handle: ({ principal, params, query }) => wallet.statement(principal, params.wsId, query),
    }),
    defineRoute({
      operationId: 'listWalletOffers',
      method: 'get',
      path: '/v1/workspaces/{wsId}/wallet/offers',
      tag: 'Wallet',
      summary: 'Credit packages on sale',
      auth: 'bearer',
      params: workspaceParams,
      success: { status: 200, description: 'Each package with a ready payment link.', schema: offerListSchema },
      handle: async ({ principal, params }) => wallet.offers(principal, params.wsId),
    }),
    defineRoute({
      operationId: 'paymentCallback',
      method: 'post',
      path: '/v1/payments/callback',
      tag: 'Wallet',
      summary: 'Payment provider callback',
      description:
        'Called by the payment provider, not by integrators: `{event_id, type: "payment.succeeded", workspace_id, offer_id}` signed with Payment-Timestamp and Payment-Signature (sha256=HMAC of "{timestamp}.{raw body}"). Each event_id adds credits once.',
      auth: 'none',
      rawBody: { contentTypes: ['application/json'], description: 'The provider event, exactly as signed.' },
      success: { status: 200, description: 'Processed; `applied` is false for a repeated event.', schema: z.object({ applied: z.boolean() }) },
      errors: ['not_found', 'payload_too_large'],
      handle: async ({ raw, header }) => {
        const event = payments.parse(header, await readBytes(raw!));
        return { applied: await wallet.applyPayment({ eventId: event.event_id, workspaceId: event.workspace_id, offerId: event.offer_id }) };
      },
    }),
  ];
}
