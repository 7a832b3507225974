import { statementQuerySchema, statementSchema } from '../src/core/wallet/wallet.schema.js';
import { defineTool } from './define-tool.js';

export const getWalletTool = defineTool({
  name: 'get_wallet',
  title: 'Get the credit wallet',
  description:
    'Shows the credit balance (saldo), the credit batches (lotes) with their expiry, and the ledger of grants, spends, refunds and expiries, newest first. ' +
    'Use it to explain a saldo_insuficiente or saldo_fragmentado error, or before publishing with modo creditos or automatico. Free: nothing is spent.',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: statementQuerySchema,
  outputSchema: statementSchema,
  handle: (input, { principal, services }) => services.wallet.statement(principal, principal.workspaceId, input),
});
