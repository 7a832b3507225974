import type { DatabaseTarget } from '../../db/connect.js';
import type { Plan } from '../core/meters/plans.js';
import type { Offer, PriceTable } from '../core/wallet/prices.js';
import type { NetworkSettings } from '../networks/network-deps.js';
import type { PlatformSlug } from '../vocabulary/platforms.js';
import type { PublisherSettings } from '../workers/publisher.js';
import type { SchedulerSettings } from '../workers/scheduler.js';
import type { DispatcherSettings } from '../workers/webhook-dispatcher.js';
import type { LOG_LEVELS, TrustProxy } from './env.js';

/** What the rest of the service receives: the configuration parsed, checked and grouped as its parts use it. */

export interface Config {
  port: number;
  host: string;
  /** Public base URL; when PORT is 0 it is completed once the real port is known. */
  baseUrl: string | undefined;
  database: DatabaseTarget;
  /** The rate limiter's shared store for several processes (REDIS_URL); undefined keeps it in the database. */
  redisUrl: string | undefined;
  /** How long `/readyz` waits for the database before answering that it is not reachable. */
  readyTimeoutMs: number;
  logLevel: (typeof LOG_LEVELS)[number];
  /** 32-byte key for AES-256-GCM of stored secrets; undefined means "use the one kept in the data folder". */
  secretKey: Buffer | undefined;
  allowLocalUrls: boolean;
  rateLimitPerMinute: number;
  /** Requests per minute per client address on the endpoints that take no credential. */
  openRateLimitPerMinute: number;
  /** Failed sign-ins allowed per account and per client address within 15 minutes. */
  signInFailures: { perAccount: number; perAddress: number };
  bodyLimit: string;
  /**
   * How long an Idempotency-Key stays blocked after the process running its first request died: the holder
   * renews it every quarter of this while it runs.
   */
  idempotencyLeaseMs: number;
  publisher: PublisherSettings;
  /** Scheduled contents: how late a due one may still start (SCHEDULE_GRACE), and the worker's mechanics. */
  scheduler: SchedulerSettings & { graceMs: number };
  dispatcher: DispatcherSettings;
  /** Access tokens live this long; there is no refresh grant, so clients authorize again after it. */
  oauthAccessTokenTtlSeconds: number;
  /**
   * OAuth Client ID Metadata Documents (an https `client_id` naming the client's own metadata): whether they
   * are accepted, and the limits on fetching them (every fetch happens before anyone has signed in).
   */
  clientMetadataDocuments: ClientMetadataDocumentLimits;
  sandboxDelayMs: number;
  /**
   * Where uploads are kept on local disk (MEDIA_STORE=local), and temporary files in any case; defaults to
   * `media/` beside the SQLite file, or `./data/media`.
   */
  mediaDir: string;
  /** Where uploads live: local disk (the embedded default) or an S3-compatible bucket shared by every host. */
  mediaStore: MediaStoreSettings;
  plans: Record<string, Plan>;
  prices: PriceTable;
  offers: Offer[];
  /** Payment link per offer; `{offer_id}` and `{workspace_id}` are filled in. */
  paymentUrlTemplate: string;
  /** HMAC key of the payment provider's callbacks; without it the callback endpoint refuses everything. */
  paymentWebhookSecret: string | undefined;
  /** No PAYMENT_URL_TEMPLATE: offers link to the built-in sandbox checkout (`/dashboard/pay`), which grants credits free. */
  sandboxPayments: boolean;
  /** Each network's OAuth client (`<NETWORK>_CLIENT_ID`, `<NETWORK>_CLIENT_SECRET`) and endpoints. */
  networks: Record<PlatformSlug, NetworkSettings>;
  /** How long before a token without a refresh path expires to warn with `connection.expired` (`expiring_soon`). */
  tokenExpiryWarningMs: number;
  /** How long audit entries are kept; the maintenance sweep deletes older ones. */
  auditRetentionMs: number;
  /** When set, /metrics needs `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  /** all: HTTP and workers; api: HTTP only; worker: workers only (several processes on one PostgreSQL). */
  role: 'all' | 'api' | 'worker';
  /** A dashboard session ends after this long without a request, and in any case after `maxMs`. */
  dashboardSession: { idleMs: number; maxMs: number };
  /**
   * The reverse proxies whose `X-Forwarded-*` headers are believed (express `trust proxy`, and the OAuth
   * provider's `proxy` flag): false (the default) trusts none; a hop count; or proxy addresses and subnets.
   */
  trustProxy: TrustProxy;
  /** Outgoing mail over SMTP (SMTP_URL, MAIL_FROM); null: one-time links are shown instead of mailed. */
  mail: MailSettings | null;
  /** Single sign-on with an OpenID Connect provider (SSO_*); null when SSO_ISSUER is unset. */
  sso: SsoSettings | null;
  /** Names of the previous release found in the environment, each with what replaced it; `main` logs them on one line. */
  deprecatedSettings: string[];
}

export type MediaStoreSettings =
  | { kind: 'local' }
  | {
      kind: 's3';
      bucket: string;
      region: string;
      /** An S3-compatible server's address (S3_ENDPOINT); AWS's own when undefined. */
      endpoint: string | undefined;
      forcePathStyle: boolean;
      /** AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY when both are set; otherwise the SDK's default chain finds them. */
      credentials: { accessKeyId: string; secretAccessKey: string; sessionToken: string | undefined } | undefined;
      /** Lifetime of the signed GET addresses handed to networks and shown as thumbnails. */
      urlTtlSeconds: number;
    };

export interface ClientMetadataDocumentLimits {
  /** `OAUTH_CLIENT_METADATA_DOCUMENTS`, on by default. */
  enabled: boolean;
  /** Document fetches one client address may cause per minute (cache hits are free). */
  fetchesPerMinute: number;
  /** A larger document is refused (the draft suggests 5 KiB). */
  maxBytes: number;
  /** A slower answer is refused; at most the provider's own 2.5 s. */
  timeoutMs: number;
  /** How long a fetched document is reused at most, whatever its Cache-Control says (at least 60 s). */
  cacheMaxSeconds: number;
  /** How long a document that failed (unreachable, refused, malformed) is not fetched again. */
  failureCacheSeconds: number;
}

export interface MailSettings {
  smtpUrl: string;
  from: string;
}

export interface SsoSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Lowercased email domains whose people may join `defaultWorkspaceId` by signing in; empty: members and invited people only. */
  allowedDomains: string[];
  defaultWorkspaceId: string | null;
  /** The role people joining by domain get (never owner). */
  defaultRole: 'admin' | 'editor' | 'contributor' | 'viewer' | 'client';
  /** The button's label after "Sign in with". */
  name: string;
}
