import { foundation } from './0001-foundation.js';
import { publishing } from './0002-publishing.js';
import { webhooks } from './0003-webhooks.js';
import { oauth } from './0004-oauth.js';
import { wallet } from './0005-wallet.js';
import { liveNetworks } from './0006-live-networks.js';
import { dashboard } from './0007-dashboard.js';
import { redeliverRequested } from './0008-redeliver-requested.js';
import { idempotencyOwner } from './0009-idempotency-owner.js';
import { brandQueues } from './0010-brand-queues.js';
import { scheduledContents } from './0011-scheduled-contents.js';
import { attemptResponses } from './0012-attempt-responses.js';
import { deliveryEndpointDue } from './0013-delivery-endpoint-due.js';
import { networkInstanceApps } from './0014-network-instance-apps.js';
import { tokenRefreshLease } from './0015-token-refresh-lease.js';
import { deliveryDueIndexDropped } from './0016-delivery-due-index-dropped.js';
import { rateLimitProcesses } from './0017-rate-limit-processes.js';
import { jobNotice } from './0018-job-notice.js';
import { people } from './0019-people.js';
import { accounts } from './0020-accounts.js';
import { passkeysSso } from './0021-passkeys-sso.js';
import { approvals } from './0023-approvals.js';
import { audit } from './0024-audit.js';
import { grantAccess } from './0025-grant-access.js';
import type { FrozenMigration } from './types.js';

/** Every migration, in the order it runs. Append only; never edit one that has shipped. */
export const migrations: readonly FrozenMigration[] = [foundation, publishing, webhooks, oauth, wallet, liveNetworks, dashboard, redeliverRequested, idempotencyOwner, brandQueues, scheduledContents, attemptResponses, deliveryEndpointDue, networkInstanceApps, tokenRefreshLease, deliveryDueIndexDropped, rateLimitProcesses, jobNotice, people, accounts, passkeysSso, approvals, audit, grantAccess];
