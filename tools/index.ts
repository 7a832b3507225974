import type { AnyTool } from './define-tool.js';
import { addSandboxConnectionTool } from './add-sandbox-connection.js';
import { approveContentTool } from './approve-content.js';
import { cancelContentTool } from './cancel-content.js';
import { choosePublishTargetTool } from './choose-publish-target.js';
import { createBrandTool } from './create-brand.js';
import { createWebhookTool } from './create-webhook.js';
import { deleteWebhookTool } from './delete-webhook.js';
import { getContentTool } from './get-content.js';
import { getQueueTool } from './get-queue.js';
import { getUsageTool } from './get-usage.js';
import { getWalletPriceTool } from './get-wallet-price.js';
import { getWalletTool } from './get-wallet.js';
import { importMediaFromUrlTool } from './import-media-from-url.js';
import { listBrandsTool } from './list-brands.js';
import { listConnectionsTool } from './list-connections.js';
import { listContentsTool } from './list-contents.js';
import { listDeliveriesTool } from './list-deliveries.js';
import { listMediaTool } from './list-media.js';
import { listPendingApprovalsTool } from './list-pending-approvals.js';
import { listPlatformsTool } from './list-platforms.js';
import { listPublishTargetsTool } from './list-publish-targets.js';
import { listWalletOffersTool } from './list-wallet-offers.js';
import { listWebhooksTool } from './list-webhooks.js';
import { previewContentTool } from './preview-content.js';
import { publishContentNowTool } from './publish-content-now.js';
import { getAuditLogTool } from './get-audit-log.js';
import { publishContentTool } from './publish-content.js';
import { redeliverDeliveryTool } from './redeliver-delivery.js';
import { requestChangesTool } from './request-changes.js';
import { retryFailedTargetsTool } from './retry-failed-targets.js';
import { sendWebhookTestTool } from './send-webhook-test.js';
import { setQueueTool } from './set-queue.js';
import { startConnectionOauthTool } from './start-connection-oauth.js';
import { submitForApprovalTool } from './submit-for-approval.js';
import { updateBrandTool } from './update-brand.js';
import { updateContentTool } from './update-content.js';
import { updateWebhookTool } from './update-webhook.js';
import { verifyWebhookSignatureTool } from './verify-webhook-signature.js';

/**
 * Every MCP tool the service offers, one file each (`publish-content.ts` defines `publish_content`). The MCP
 * door registers exactly this list; the registry test checks each entry's name, hints, schemas and text.
 */
export const tools: readonly AnyTool[] = [
  publishContentTool,
  previewContentTool,
  updateContentTool,
  cancelContentTool,
  publishContentNowTool,
  retryFailedTargetsTool,
  getContentTool,
  listContentsTool,
  submitForApprovalTool,
  listPendingApprovalsTool,
  approveContentTool,
  requestChangesTool,
  listPlatformsTool,
  listBrandsTool,
  createBrandTool,
  updateBrandTool,
  getQueueTool,
  setQueueTool,
  listConnectionsTool,
  addSandboxConnectionTool,
  startConnectionOauthTool,
  listPublishTargetsTool,
  choosePublishTargetTool,
  createWebhookTool,
  listWebhooksTool,
  updateWebhookTool,
  deleteWebhookTool,
  sendWebhookTestTool,
  listDeliveriesTool,
  listMediaTool,
  importMediaFromUrlTool,
  redeliverDeliveryTool,
  verifyWebhookSignatureTool,
  getUsageTool,
  getWalletTool,
  getWalletPriceTool,
  listWalletOffersTool,
  getAuditLogTool,
];
