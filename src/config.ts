import { isIP } from 'node:net';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { DEFAULT_POSTGRES_WAITS, type DatabaseTarget } from '../db/connect.js';
import { DEFAULT_PLANS, type Plan, planSchema } from './core/meters/plans.js';
import { DEFAULT_OFFERS, DEFAULT_PRICES, type Offer, offerSchema, type PriceTable, priceTableSchema } from './core/wallet/prices.js';
import type { PublisherSettings } from './workers/publisher.js';
import type { SchedulerSettings } from './workers/scheduler.js';
import type { DispatcherSettings } from './workers/webhook-dispatcher.js';
import { PLATFORM_SLUGS, type PlatformSlug } from './vocabulary/platforms.js';
import type { NetworkSettings } from './networks/network-deps.js';

/**
 * The service configuration. This module is the only reader of `process.env`: everything else receives a
 * `Config`. Parsing is strict so that a typo stops the process at start instead of misbehaving later.
 */

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const booleanText = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

function positiveInt(fallback: number) {
  return z.coerce
    .number({ message: 'must be a positive integer' })
    .int({ message: 'must be a positive integer' })
    .positive({ message: 'must be a positive integer' })
    .default(fallback);
}

function ms(fallback: number) {
  return positiveInt(fallback);
}

/** Milliseconds where 0 means "no limit". */
function msOrOff(fallback: number) {
  return z.coerce
    .number({ message: 'must be a number of milliseconds (0 for no limit)' })
    .int({ message: 'must be a number of milliseconds (0 for no limit)' })
    .min(0, { message: 'must be a number of milliseconds (0 for no limit)' })
    .default(fallback);
}

const envSchema = z.object({
  PORT: z.coerce
    .number({ message: 'must be an integer between 0 and 65535' })
    .int({ message: 'must be an integer between 0 and 65535' })
    .min(0, { message: 'must be an integer between 0 and 65535' })
    .max(65535, { message: 'must be an integer between 0 and 65535' })
    .default(8080),
  HOST: z.string().min(1, { message: 'must not be empty' }).default('127.0.0.1'),
  BASE_URL: z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .optional(),
  DATABASE_URL: z
    .string()
    .regex(/^(sqlite:|file:|postgres:\/\/|postgresql:\/\/)/, {
      message: 'must start with sqlite:, file:, postgres:// or postgresql://',
    })
    .default('sqlite:./data/service.db'),
  DATABASE_PREPARED_STATEMENTS: booleanText.default(true),
  DATABASE_CONNECT_TIMEOUT_MS: msOrOff(DEFAULT_POSTGRES_WAITS.connectMs),
  DATABASE_STATEMENT_TIMEOUT_MS: msOrOff(DEFAULT_POSTGRES_WAITS.statementMs),
  DATABASE_LOCK_TIMEOUT_MS: msOrOff(DEFAULT_POSTGRES_WAITS.lockMs),
  SQLITE_WRITE_FAILURE_HOLD_MS: ms(30_000),
  READY_TIMEOUT_MS: ms(2_000),
  LOG_LEVEL: z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  SECRET_KEY: z
    .string()
    .regex(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, {
      message: 'must be 32 bytes as 64 hex characters or 44 base64 characters',
    })
    .optional(),
  ALLOW_LOCAL_URLS: booleanText.default(false),
  BLUESKY_VIDEO_URL: z.string().regex(/^https?:\/\/[^\s]+$/, { message: 'must be an http(s) URL' }).default('https://video.bsky.app'),
  TIKTOK_POST_MODE: z.enum(['direct', 'inbox']).default('direct'),
  TIKTOK_APP_AUDITED: booleanText.default(false),
  TIKTOK_PULL_VIDEOS_FROM_URL: booleanText.default(false),
  RATE_LIMIT_PER_MINUTE: positiveInt(600),
  CONFIRM_INTERVAL_MS: ms(10_000),
  CONFIRM_DEADLINE_MS: ms(300_000),
  LATE_CHECK_INTERVAL_MS: ms(600_000),
  LATE_CHECK_WINDOW_MS: ms(86_400_000),
  JOB_LEASE_MS: ms(60_000),
  IDEMPOTENCY_LEASE_MS: ms(60_000),
  PUBLISH_DEADLINE_MS: ms(7_200_000),
  JOB_RETRY_DELAYS_MS: z
    .string()
    .regex(/^\d+(,\d+)*$/, { message: 'must be a comma-separated list of milliseconds' })
    .default('5000,30000,120000'),
  WORKER_CONCURRENCY: positiveInt(8),
  WORKER_PER_CONNECTION: positiveInt(2),
  WORKER_POLL_MS: ms(500),
  SCHEDULE_GRACE_MS: ms(3_600_000),
  SCHEDULER_LANES: z.coerce.number().int().min(1).max(32).default(4),
  SANDBOX_DELAY_MS: z.coerce.number({ message: 'must be a number of milliseconds' }).int().min(0).default(50),
  MEDIA_DIR: z.string().min(1).optional(),
  MEDIA_STORE: z.enum(['local', 's3'], { message: 'must be local or s3' }).default('local'),
  S3_BUCKET: z.string().min(1).optional(),
  S3_REGION: z.string().min(1).optional(),
  S3_ENDPOINT: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
  S3_FORCE_PATH_STYLE: booleanText.default(false),
  S3_URL_TTL_SECONDS: z.coerce.number({ message: 'must be a number of seconds from 1 to 604800' }).int().min(1).max(604_800).default(3_600),
  AWS_ACCESS_KEY_ID: z.string().min(1).optional(),
  AWS_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  AWS_SESSION_TOKEN: z.string().min(1).optional(),
  OAUTH_ACCESS_TOKEN_TTL_SECONDS: positiveInt(86_400),
  OAUTH_CLIENT_METADATA_DOCUMENTS: booleanText.default(true),
  OAUTH_CIMD_FETCHES_PER_MINUTE: positiveInt(10),
  OAUTH_CIMD_MAX_BYTES: positiveInt(5_120),
  OAUTH_CIMD_TIMEOUT_MS: z.coerce.number({ message: 'must be a number of milliseconds from 1 to 2500' }).int().min(1).max(2_500).default(2_500),
  OAUTH_CIMD_CACHE_MAX_SECONDS: positiveInt(3_600),
  OAUTH_CIMD_FAILURE_CACHE_SECONDS: positiveInt(60),
  PRICES_JSON: z.string().optional(),
  TOKEN_EXPIRY_WARNING_DAYS: positiveInt(7),
  METRICS_TOKEN: z.string().min(16, { message: 'must be at least 16 characters' }).optional(),
  SERVICE_ROLE: z.enum(['all', 'api', 'worker'], { message: 'must be all, api or worker' }).default('all'),
  OFFERS_JSON: z.string().optional(),
  PAYMENT_URL_TEMPLATE: z.string().min(1).optional(),
  PAYMENT_WEBHOOK_SECRET: z.string().min(16, { message: 'must be at least 16 characters' }).optional(),
  WEBHOOK_TIMEOUT_MS: ms(30_000),
  WEBHOOK_CONCURRENCY: positiveInt(64),
  WEBHOOK_PER_ENDPOINT: positiveInt(16),
  PLANS_JSON: z.string().optional(),
  OPEN_RATE_LIMIT_PER_MINUTE: positiveInt(120),
  REDIS_URL: z.string().regex(/^rediss?:\/\/\S+$/, { message: 'must be a redis:// or rediss:// URL' }).optional(),
  DASHBOARD_SESSION_IDLE_MINUTES: positiveInt(60),
  DASHBOARD_SESSION_MAX_HOURS: positiveInt(12),
  TRUST_PROXY: z
    .string()
    .refine((v) => parseTrustProxy(v) !== undefined, {
      message: 'must be false, a number of proxy hops, or a comma-separated list of proxy addresses, subnets (10.0.0.0/8) or loopback, linklocal, uniquelocal',
    })
    .default('false'),
  BODY_LIMIT: z
    .string()
    .regex(/^\d+(b|kb|mb)$/i, { message: 'must be a size such as 1mb or 512kb' })
    .default('1mb'),
});

export interface Config {
  port: number;
  host: string;
  /** Public base URL; when PORT is 0 it is completed once the real port is known. */
  baseUrl: string | undefined;
  database: DatabaseTarget;
  /** How long `/readyz` waits for the database before answering that it is not reachable. */
  readyTimeoutMs: number;
  logLevel: (typeof LOG_LEVELS)[number];
  /** 32-byte key for AES-256-GCM of stored secrets; undefined means "use the one kept in the data folder". */
  secretKey: Buffer | undefined;
  allowLocalUrls: boolean;
  rateLimitPerMinute: number;
  /** Requests per minute per client address on the endpoints that take no credential. */
  openRateLimitPerMinute: number;
  /** Where the rate limits count when several processes share them through Redis; undefined: the database. */
  redisUrl: string | undefined;
  bodyLimit: string;
  /**
   * How long an Idempotency-Key stays blocked after the process running its first request died: the holder
   * renews it every quarter of this while it runs.
   */
  idempotencyLeaseMs: number;
  publisher: PublisherSettings;
  /** Scheduled contents: how late a due one may still start (SCHEDULE_GRACE_MS), and the worker's mechanics. */
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
  /** Each network's OAuth client and API addresses (`<NETWORK>_CLIENT_ID`, `<NETWORK>_API_URL`, …). */
  networks: Record<PlatformSlug, NetworkSettings>;
  /** How long before a token without a refresh path expires to warn with `connection.expired` (`expiring_soon`). */
  tokenExpiryWarningMs: number;
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

/**
 * The media store settings. S3 needs its bucket and region; the keys come in pairs.
 * @throws ConfigError naming the missing variable.
 */
function mediaStoreSettings(e: z.infer<typeof envSchema>): MediaStoreSettings {
  if (e.MEDIA_STORE === 'local') return { kind: 'local' };
  if (e.S3_BUCKET === undefined) throw new ConfigError('S3_BUCKET', 'S3_BUCKET is required when MEDIA_STORE is s3');
  if (e.S3_REGION === undefined) throw new ConfigError('S3_REGION', 'S3_REGION is required when MEDIA_STORE is s3 (any region name for most S3-compatible servers, e.g. us-east-1)');
  if ((e.AWS_ACCESS_KEY_ID === undefined) !== (e.AWS_SECRET_ACCESS_KEY === undefined)) {
    const missing = e.AWS_ACCESS_KEY_ID === undefined ? 'AWS_ACCESS_KEY_ID' : 'AWS_SECRET_ACCESS_KEY';
    throw new ConfigError(missing, `${missing} is required with ${missing === 'AWS_ACCESS_KEY_ID' ? 'AWS_SECRET_ACCESS_KEY' : 'AWS_ACCESS_KEY_ID'}`);
  }
  return {
    kind: 's3',
    bucket: e.S3_BUCKET,
    region: e.S3_REGION,
    endpoint: e.S3_ENDPOINT?.replace(/\/+$/, ''),
    forcePathStyle: e.S3_FORCE_PATH_STYLE,
    credentials:
      e.AWS_ACCESS_KEY_ID !== undefined && e.AWS_SECRET_ACCESS_KEY !== undefined
        ? { accessKeyId: e.AWS_ACCESS_KEY_ID, secretAccessKey: e.AWS_SECRET_ACCESS_KEY, sessionToken: e.AWS_SESSION_TOKEN }
        : undefined,
    urlTtlSeconds: e.S3_URL_TTL_SECONDS,
  };
}

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

/** What express's `trust proxy` accepts, minus `true` (which would believe any client that sends the headers). */
export type TrustProxy = false | number | string[];

const PROXY_KEYWORDS = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * The base URL when `BASE_URL` is unset: the address the service listens on, so that the URL printed, the links
 * and the OAuth metadata (issuer, `resource`) name the host a local client actually dials. OAuth clients compare
 * those strings exactly (RFC 8414 §3.3, RFC 9728 §3.3): `localhost` in the metadata and `127.0.0.1` in the client
 * fail the check although both reach the same socket. A wildcard listens on loopback too; its loopback address
 * stands in for it.
 */
/** The offers' link to the built-in sandbox checkout of a service at `baseUrl` (a dashboard page: its cookie's path). */
export function sandboxPaymentUrlTemplate(baseUrl: string): string {
  return `${baseUrl}/dashboard/pay?offer={offer_id}&workspace={workspace_id}`;
}

export function defaultBaseUrl(host: string, port: number): string {
  if (host === '0.0.0.0') return `http://127.0.0.1:${port}`;
  if (host === '::' || host === '[::]') return `http://[::1]:${port}`;
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return `http://${isIP(bare) === 6 ? `[${bare}]` : bare}:${port}`;
}

/** Parses `TRUST_PROXY`; undefined when the value names no proxy usably. */
function parseTrustProxy(text: string): TrustProxy | undefined {
  const value = text.trim().toLowerCase();
  if (['false', '0', 'no', ''].includes(value)) return false;
  if (/^[1-9]\d*$/.test(value)) return Number(value);
  const entries = value.split(',').map((e) => e.trim());
  const valid = entries.every((e) => {
    if (PROXY_KEYWORDS.has(e)) return true;
    const [address, prefix, extra] = e.split('/');
    if (extra !== undefined || address === undefined || isIP(address) === 0) return false;
    if (prefix === undefined) return true;
    const bits = Number(prefix);
    return /^\d+$/.test(prefix) && bits <= (isIP(address) === 4 ? 32 : 128);
  });
  return valid ? entries : undefined;
}

/** The official endpoints, overridable per network (tests point them at local fakes). */
const NETWORK_DEFAULTS: Record<PlatformSlug, { api: string; authorize: string; token: string; version?: string }> = {
  instagram: { api: 'https://graph.instagram.com/v23.0', authorize: 'https://www.instagram.com/oauth/authorize', token: 'https://api.instagram.com/oauth/access_token' },
  facebook: { api: 'https://graph.facebook.com/v23.0', authorize: 'https://www.facebook.com/v23.0/dialog/oauth', token: 'https://graph.facebook.com/v23.0/oauth/access_token' },
  threads: { api: 'https://graph.threads.net/v1.0', authorize: 'https://threads.net/oauth/authorize', token: 'https://graph.threads.net/oauth/access_token' },
  // A month LinkedIn still serves (each is served about a year); the process warns at start once it is 11 months old.
  linkedin: { api: 'https://api.linkedin.com', authorize: 'https://www.linkedin.com/oauth/v2/authorization', token: 'https://www.linkedin.com/oauth/v2/accessToken', version: '202610' },
  youtube: { api: 'https://www.googleapis.com', authorize: 'https://accounts.google.com/o/oauth2/v2/auth', token: 'https://oauth2.googleapis.com/token' },
  x: { api: 'https://api.x.com', authorize: 'https://x.com/i/oauth2/authorize', token: 'https://api.x.com/2/oauth2/token' },
  // Bluesky signs in with an app password at the account's entryway; there is no authorize page or client.
  bluesky: { api: 'https://bsky.social', authorize: 'https://bsky.social', token: 'https://bsky.social' },
  // Each user names their own Mastodon instance; these are only the suggestion shown when none is given.
  mastodon: { api: 'https://mastodon.social', authorize: 'https://mastodon.social/oauth/authorize', token: 'https://mastodon.social/oauth/token' },
  tiktok: { api: 'https://open.tiktokapis.com', authorize: 'https://www.tiktok.com/v2/auth/authorize/', token: 'https://open.tiktokapis.com/v2/oauth/token/' },
  pinterest: { api: 'https://api.pinterest.com/v5', authorize: 'https://www.pinterest.com/oauth/', token: 'https://api.pinterest.com/v5/oauth/token' },
};

function networkSettings(env: Record<string, string | undefined>): Record<PlatformSlug, NetworkSettings> {
  // API bases lose a trailing slash (paths are appended); authorize and token addresses are kept as given, since
  // some networks' end in one (Pinterest's /oauth/, TikTok's /v2/oauth/token/).
  const url = (variable: string, fallback: string, keepSlash = false): string => {
    const value = env[variable] === '' ? undefined : env[variable];
    if (value === undefined) return fallback;
    if (!/^https?:\/\/[^\s]+$/.test(value)) throw new ConfigError(variable, `${variable} must be an http(s) URL (got ${JSON.stringify(value)})`);
    return keepSlash ? value : value.replace(/\/+$/, '');
  };
  const out = {} as Record<PlatformSlug, NetworkSettings>;
  for (const slug of PLATFORM_SLUGS) {
    const p = slug.toUpperCase();
    const d = NETWORK_DEFAULTS[slug];
    out[slug] = {
      clientId: env[`${p}_CLIENT_ID`] || undefined,
      clientSecret: env[`${p}_CLIENT_SECRET`] || undefined,
      apiBaseUrl: url(`${p}_API_URL`, d.api),
      authorizeUrl: url(`${p}_AUTHORIZE_URL`, d.authorize, true),
      tokenUrl: url(`${p}_TOKEN_URL`, d.token, true),
      apiVersion: env[`${p}_API_VERSION`] || d.version,
    };
  }
  return out;
}

/** A configuration value that cannot be used; `main` prints `message` on one line and exits with code 2. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

function parseDatabaseUrl(e: z.infer<typeof envSchema>): DatabaseTarget {
  const url = e.DATABASE_URL;
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const waits = { connectMs: e.DATABASE_CONNECT_TIMEOUT_MS, statementMs: e.DATABASE_STATEMENT_TIMEOUT_MS, lockMs: e.DATABASE_LOCK_TIMEOUT_MS };
    return { dialect: 'postgres', connectionString: url, preparedStatements: e.DATABASE_PREPARED_STATEMENTS, waits };
  }
  const file = url.replace(/^(sqlite|file):/, '');
  if (file.length === 0) {
    throw new ConfigError('DATABASE_URL', 'DATABASE_URL: the sqlite: form needs a file path (sqlite:./data/service.db)');
  }
  return { dialect: 'sqlite', file, writeFailureHoldMs: e.SQLITE_WRITE_FAILURE_HOLD_MS };
}

function decodeSecretKey(text: string): Buffer {
  return /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
}

/** Below this, renewals (every third of the lease) are so frequent that an ordinary pause loses the lease. */
const MIN_JOB_LEASE_MS = 1_000;

/**
 * `JOB_LEASE_MS` against the steps a run makes (ARCHITECTURE decision 5, "leases outlast the longest call"). A
 * running job renews its lease every third of it; the lease must still outlast any single step, so that a run
 * whose renewals fail (database unreachable) ends the call under way before another worker may take the job
 * over. A sandbox step lasts up to 1.5 × SANDBOX_DELAY_MS (its jitter, `src/networks/sandbox.ts`).
 * @throws ConfigError naming JOB_LEASE_MS
 */
function checkJobLease(leaseMs: number, sandboxDelayMs: number): void {
  if (leaseMs < MIN_JOB_LEASE_MS) {
    throw new ConfigError('JOB_LEASE_MS', `JOB_LEASE_MS must be at least ${MIN_JOB_LEASE_MS} ms: a running job renews its lease every third of it, and a shorter lease is lost to an ordinary pause (got ${leaseMs})`);
  }
  const longestSandboxStep = Math.ceil(sandboxDelayMs * 1.5);
  if (leaseMs <= longestSandboxStep) {
    throw new ConfigError(
      'JOB_LEASE_MS',
      `JOB_LEASE_MS (${leaseMs} ms) must be longer than the longest sandbox call, ${longestSandboxStep} ms (1.5 × SANDBOX_DELAY_MS ${sandboxDelayMs} ms): a lease shorter than one call is lost while the call runs`,
    );
  }
}

const MIN_IDEMPOTENCY_LEASE_MS = 2_000;

/** @throws ConfigError naming IDEMPOTENCY_LEASE_MS */
function checkIdempotencyLease(leaseMs: number): number {
  if (leaseMs < MIN_IDEMPOTENCY_LEASE_MS) {
    throw new ConfigError(
      'IDEMPOTENCY_LEASE_MS',
      `IDEMPOTENCY_LEASE_MS must be at least ${MIN_IDEMPOTENCY_LEASE_MS} ms: a running request renews its key every quarter of it, and a shorter lease is lost to an ordinary pause (got ${leaseMs})`,
    );
  }
  return leaseMs;
}

/**
 * Parses the environment into a `Config`.
 * @throws ConfigError naming the first variable whose value is unusable.
 */
export function parseConfig(env: Record<string, string | undefined>): Config {
  // Empty strings mean "unset", as shells and .env files commonly produce them.
  const present = Object.fromEntries(
    Object.keys(envSchema.shape).map((k) => [k, env[k] === '' ? undefined : env[k]]),
  );
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue?.path[0] ?? 'environment');
    const value = env[variable];
    throw new ConfigError(variable, `${variable} ${issue?.message ?? 'is invalid'} (got ${JSON.stringify(value)})`);
  }
  const e = parsed.data;
  const database = parseDatabaseUrl(e);
  if (database.dialect === 'postgres' && e.SECRET_KEY === undefined) {
    throw new ConfigError('SECRET_KEY', 'SECRET_KEY is required when DATABASE_URL selects PostgreSQL');
  }
  checkJobLease(e.JOB_LEASE_MS, e.SANDBOX_DELAY_MS);
  const baseUrl = e.BASE_URL?.replace(/\/+$/, '');
  // Plans given are merged over the built-in ones, so a deployment can add one plan without restating the rest.
  const plans = { ...DEFAULT_PLANS, ...parseJsonSetting('PLANS_JSON', e.PLANS_JSON, z.record(z.string(), planSchema), {}) };
  const prices = parseJsonSetting('PRICES_JSON', e.PRICES_JSON, priceTableSchema, DEFAULT_PRICES);
  const offers = parseJsonSetting('OFFERS_JSON', e.OFFERS_JSON, z.array(offerSchema).min(1), DEFAULT_OFFERS);
  const networks = networkSettings(env);
  networks.bluesky.mediaServiceUrl = e.BLUESKY_VIDEO_URL.replace(/\/+$/, '');
  networks.tiktok.posting = { mode: e.TIKTOK_POST_MODE, appAudited: e.TIKTOK_APP_AUDITED, pullVideosFromUrl: e.TIKTOK_PULL_VIDEOS_FROM_URL };
  return {
    port: e.PORT,
    host: e.HOST,
    baseUrl: baseUrl ?? (e.PORT === 0 ? undefined : defaultBaseUrl(e.HOST, e.PORT)),
    database,
    readyTimeoutMs: e.READY_TIMEOUT_MS,
    logLevel: e.LOG_LEVEL,
    secretKey: e.SECRET_KEY === undefined ? undefined : decodeSecretKey(e.SECRET_KEY),
    allowLocalUrls: e.ALLOW_LOCAL_URLS,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    openRateLimitPerMinute: e.OPEN_RATE_LIMIT_PER_MINUTE,
    redisUrl: e.REDIS_URL,
    bodyLimit: e.BODY_LIMIT.toLowerCase(),
    idempotencyLeaseMs: checkIdempotencyLease(e.IDEMPOTENCY_LEASE_MS),
    publisher: {
      concurrency: e.WORKER_CONCURRENCY,
      perConnection: e.WORKER_PER_CONNECTION,
      leaseMs: e.JOB_LEASE_MS,
      pollMs: e.WORKER_POLL_MS,
      confirmIntervalMs: e.CONFIRM_INTERVAL_MS,
      confirmDeadlineMs: e.CONFIRM_DEADLINE_MS,
      lateCheckIntervalMs: e.LATE_CHECK_INTERVAL_MS,
      lateCheckWindowMs: e.LATE_CHECK_WINDOW_MS,
      retryDelaysMs: e.JOB_RETRY_DELAYS_MS.split(',').map(Number),
      publishDeadlineMs: e.PUBLISH_DEADLINE_MS,
    },
    scheduler: { graceMs: e.SCHEDULE_GRACE_MS, pollMs: e.WORKER_POLL_MS, lanes: e.SCHEDULER_LANES, perTick: 500, batch: 100 },
    dispatcher: {
      concurrency: e.WEBHOOK_CONCURRENCY,
      perEndpoint: e.WEBHOOK_PER_ENDPOINT,
      // The lease outlives the longest attempt, so another worker never takes over a delivery still waiting.
      leaseMs: e.WEBHOOK_TIMEOUT_MS + 5_000,
      pollMs: e.WORKER_POLL_MS,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
    },
    oauthAccessTokenTtlSeconds: e.OAUTH_ACCESS_TOKEN_TTL_SECONDS,
    clientMetadataDocuments: {
      enabled: e.OAUTH_CLIENT_METADATA_DOCUMENTS,
      fetchesPerMinute: e.OAUTH_CIMD_FETCHES_PER_MINUTE,
      maxBytes: e.OAUTH_CIMD_MAX_BYTES,
      timeoutMs: e.OAUTH_CIMD_TIMEOUT_MS,
      cacheMaxSeconds: e.OAUTH_CIMD_CACHE_MAX_SECONDS,
      failureCacheSeconds: e.OAUTH_CIMD_FAILURE_CACHE_SECONDS,
    },
    sandboxDelayMs: e.SANDBOX_DELAY_MS,
    mediaDir: e.MEDIA_DIR ?? join(database.dialect === 'sqlite' ? dirname(database.file) : './data', 'media'),
    mediaStore: mediaStoreSettings(e),
    plans,
    prices: { ...DEFAULT_PRICES, ...prices },
    offers,
    paymentUrlTemplate: e.PAYMENT_URL_TEMPLATE ?? sandboxPaymentUrlTemplate(baseUrl ?? defaultBaseUrl(e.HOST, e.PORT)),
    paymentWebhookSecret: e.PAYMENT_WEBHOOK_SECRET,
    sandboxPayments: e.PAYMENT_URL_TEMPLATE === undefined,
    networks,
    tokenExpiryWarningMs: e.TOKEN_EXPIRY_WARNING_DAYS * 86_400_000,
    metricsToken: e.METRICS_TOKEN,
    role: e.SERVICE_ROLE,
    dashboardSession: { idleMs: e.DASHBOARD_SESSION_IDLE_MINUTES * 60_000, maxMs: e.DASHBOARD_SESSION_MAX_HOURS * 3_600_000 },
    trustProxy: parseTrustProxy(e.TRUST_PROXY) ?? false,
  };
}

/** A JSON-valued setting, checked with its schema. @throws ConfigError naming the variable. */
function parseJsonSetting<T>(variable: string, text: string | undefined, schema: z.ZodType<T>, fallback: T): T {
  if (text === undefined) return fallback;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ConfigError(variable, `${variable} must be valid JSON`);
  }
  const checked = schema.safeParse(value);
  if (!checked.success) throw new ConfigError(variable, `${variable} ${checked.error.issues[0]?.message ?? 'is invalid'} at ${checked.error.issues[0]?.path.join('.') ?? ''}`);
  return checked.data;
}

/** Reads the process environment. */
export function loadConfig(): Config {
  return parseConfig(process.env);
}

/**
 * The API key the stdio MCP entry acts with (`PUBLISHER_API_KEY`), or undefined when unset or empty. Kept out
 * of `Config`: only that entry needs a credential, and the server must never run with one.
 */
export function loadStdioApiKey(env: Record<string, string | undefined> = process.env): string | undefined {
  const key = env.PUBLISHER_API_KEY?.trim();
  return key === undefined || key === '' ? undefined : key;
}
