import { z } from 'zod';
import { offerListSchema } from '../src/core/wallet/wallet.schema.js';
import { count, defineTool, listed } from './define-tool.js';

export const listWalletOffersTool = defineTool({
  name: 'list_wallet_offers',
  title: 'List credit packages',
  description:
    'Lists the credit packages on sale, each with its credits, price, currency and a ready payment link for this workspace. ' +
    'Offer the link to the user when the balance does not cover what they want to publish; paying adds a credit batch. Free: nothing is spent.',
  permission: 'wallet.pay',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: z.strictObject({}),
  outputSchema: offerListSchema,
  summary: (list) =>
    list.data.length === 0 ? 'No credit package is on sale.' : `${count(list.data.length, 'credit package')}: ${listed(list.data.map((o) => `${o.credits} credits for ${o.price} ${o.currency}`))}.`,
  handle: async (_input, { principal, services }) => services.wallet.offers(principal, principal.workspaceId),
});
