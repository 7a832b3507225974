import { priceQuerySchema, priceSchema } from '../src/core/wallet/wallet.schema.js';
import { count, defineTool } from './define-tool.js';

export const getWalletPriceTool = defineTool({
  name: 'get_wallet_price',
  title: 'Get the price of an operation',
  description:
    'Returns the credit price of an operation (publicacao: one platform post; criacao_de_conteudo: one content) for a quantity, what it would cost, ' +
    'the balance available, and whether the plan still covers it this cycle. Consult it before publishing with modo creditos or automatico. ' +
    'An operation without a published price answers operacao_sem_preco (never free by omission). Free: nothing is spent.',
  permission: 'wallet.read',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: priceQuerySchema,
  outputSchema: priceSchema,
  summary: (p) =>
    `${p.quantidade} × ${p.operacao} costs ${count(p.custo_estimado, 'credit')} (${p.preco_unitario} each); ${p.saldo_disponivel} available; ` +
    `the plan ${p.coberto_pelo_plano ? 'still covers' : 'does not cover'} it this cycle.`,
  handle: (input, { principal, services }) => services.wallet.price(principal, principal.workspaceId, input),
});
