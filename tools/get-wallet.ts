import { statementQuerySchema, statementSchema } from '../src/core/wallet/wallet.schema.js';
import { count, dashboardLink, defineTool } from './define-tool.js';

export const getWalletTool = defineTool({
  name: 'get_wallet',
  title: 'Get the credit wallet',
  description:
    'Shows the credit balance (saldo), the credit batches (lotes) with their expiry, and the ledger of grants, spends, refunds and expiries, newest first. ' +
    'Use it to explain a saldo_insuficiente or saldo_fragmentado error, or before publishing with modo creditos or automatico. Free: nothing is spent.',
  permission: 'wallet.read',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: statementQuerySchema,
  outputSchema: statementSchema,
  summary(w) {
    const open = w.lotes.filter((l) => !l.expired && l.remaining > 0).length;
    return `Balance ${count(w.saldo, 'credit')} in ${count(open, 'open batch', 'open batches')}; ${count(w.ledger.data.length, 'ledger entry', 'ledger entries')} on this page.`;
  },
  links: () => [dashboardLink.wallet()],
  handle: (input, { principal, services }) => services.wallet.statement(principal, principal.workspaceId, input),
});
