import { verifyInputSchema, verifyResultSchema } from '../src/core/webhooks/webhooks.schema.js';
import { defineTool } from './define-tool.js';

export const verifyWebhookSignatureTool = defineTool({
  name: 'verify_webhook_signature',
  title: 'Check a webhook signature',
  description:
    'Checks a webhook signature the way a receiver should: payload is the signed string "{Service-Timestamp}.{raw body}", signature_header the Service-Signature value ' +
    '(sha256=<hex>), secret the endpoint\'s whsec_ secret; the timestamp must be within tolerance_seconds of the service clock. ' +
    'Answers which check failed (format, timestamp, HMAC). Use it to debug a receiver that rejects our events. Free: touches no workspace data and uses no meter.',
  permission: 'workspace.read',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: verifyInputSchema,
  outputSchema: verifyResultSchema,
  summary: (v) => (v.valid ? 'The signature is valid.' : `The signature is not valid: ${v.reason ?? 'a check failed'}.`),
  handle: async (input, { services }) => services.webhooks.verify(input),
});
