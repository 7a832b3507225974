import { isIP } from 'node:net';
import { dirname, join } from 'node:path';
import type { DatabaseTarget } from '../../db/connect.js';
import { businessTables } from './business.js';
import { type Env, parseTrustProxy, readEnv } from './env.js';
import { ConfigError } from './errors.js';
import { networkSettings } from './networks.js';
import { type TestKnobs, type TestOverrides, testKnobs } from './test-overrides.js';
import type { Config, MailSettings, MediaStoreSettings, SsoSettings } from './types.js';

/**
 * The service configuration. This folder is the only reader of `process.env`: everything else receives a
 * `Config` (`types.ts`). `env.ts` holds what an operator sets, `networks.ts` the networks' endpoints, `business.ts` the plans,
 * prices and offers, `test-overrides.ts` the knobs only tests and benches turn.
 */

export { ConfigError } from './errors.js';
export type { TrustProxy } from './env.js';
export { parseDuration } from './durations.js';
export type { TestOverrides } from './test-overrides.js';
export type { ClientMetadataDocumentLimits, Config, MailSettings, MediaStoreSettings, SsoSettings } from './types.js';
export { TEST_OVERRIDES_VARIABLE } from './test-overrides.js';

/**
 * The media store settings. S3 needs its bucket and region; the keys come in pairs.
 * @throws ConfigError naming the missing variable.
 */
function mediaStoreSettings(m: Env['media']): MediaStoreSettings {
  if (m.MEDIA_STORE === 'local') return { kind: 'local' };
  if (m.S3_BUCKET === undefined) throw new ConfigError('S3_BUCKET', 'S3_BUCKET is required when MEDIA_STORE is s3');
  if (m.S3_REGION === undefined) throw new ConfigError('S3_REGION', 'S3_REGION is required when MEDIA_STORE is s3 (any region name for most S3-compatible servers, e.g. us-east-1)');
  if ((m.AWS_ACCESS_KEY_ID === undefined) !== (m.AWS_SECRET_ACCESS_KEY === undefined)) {
    const missing = m.AWS_ACCESS_KEY_ID === undefined ? 'AWS_ACCESS_KEY_ID' : 'AWS_SECRET_ACCESS_KEY';
    throw new ConfigError(missing, `${missing} is required with ${missing === 'AWS_ACCESS_KEY_ID' ? 'AWS_SECRET_ACCESS_KEY' : 'AWS_ACCESS_KEY_ID'}`);
  }
  return {
    kind: 's3',
    bucket: m.S3_BUCKET,
    region: m.S3_REGION,
    endpoint: m.S3_ENDPOINT?.replace(/\/+$/, ''),
    forcePathStyle: m.S3_FORCE_PATH_STYLE,
    credentials:
      m.AWS_ACCESS_KEY_ID !== undefined && m.AWS_SECRET_ACCESS_KEY !== undefined
        ? { accessKeyId: m.AWS_ACCESS_KEY_ID, secretAccessKey: m.AWS_SECRET_ACCESS_KEY, sessionToken: m.AWS_SESSION_TOKEN }
        : undefined,
    urlTtlSeconds: Math.floor(m.S3_URL_TTL / 1_000),
  };
}

/**
 * Outgoing mail: null without SMTP_URL (one-time links are then shown instead of mailed).
 * @throws ConfigError naming MAIL_FROM when SMTP_URL is set without it.
 */
function mailSettings(m: Env['mail']): MailSettings | null {
  if (m.SMTP_URL === undefined) return null;
  if (m.MAIL_FROM === undefined) throw new ConfigError('MAIL_FROM', 'MAIL_FROM is required with SMTP_URL (the sender of every message, e.g. Publisher <no-reply@example.com>)');
  return { smtpUrl: m.SMTP_URL, from: m.MAIL_FROM };
}

/**
 * Single sign-on: null without SSO_ISSUER. The client id and secret come with it; a default role needs a default
 * workspace to apply to.
 * @throws ConfigError naming the missing variable.
 */
function ssoSettings(o: Env['sso']): SsoSettings | null {
  if (o.SSO_ISSUER === undefined) {
    const stray = (['SSO_CLIENT_ID', 'SSO_CLIENT_SECRET', 'SSO_ALLOWED_DOMAINS', 'SSO_DEFAULT_WORKSPACE'] as const).find((k) => o[k] !== undefined);
    if (stray !== undefined) throw new ConfigError('SSO_ISSUER', `SSO_ISSUER is required with ${stray}`);
    return null;
  }
  if (o.SSO_CLIENT_ID === undefined) throw new ConfigError('SSO_CLIENT_ID', 'SSO_CLIENT_ID is required with SSO_ISSUER');
  if (o.SSO_CLIENT_SECRET === undefined) throw new ConfigError('SSO_CLIENT_SECRET', 'SSO_CLIENT_SECRET is required with SSO_ISSUER');
  const domains = (o.SSO_ALLOWED_DOMAINS ?? '').split(',').map((d) => d.trim().toLowerCase()).filter((d) => d !== '');
  if (domains.length > 0 && o.SSO_DEFAULT_WORKSPACE === undefined) {
    throw new ConfigError('SSO_DEFAULT_WORKSPACE', 'SSO_DEFAULT_WORKSPACE is required with SSO_ALLOWED_DOMAINS (the workspace people of those domains join)');
  }
  return {
    issuer: o.SSO_ISSUER,
    clientId: o.SSO_CLIENT_ID,
    clientSecret: o.SSO_CLIENT_SECRET,
    allowedDomains: domains,
    defaultWorkspaceId: o.SSO_DEFAULT_WORKSPACE ?? null,
    defaultRole: o.SSO_DEFAULT_ROLE,
    name: o.SSO_NAME,
  };
}

/** The offers' link to the built-in sandbox checkout of a service at `baseUrl` (a dashboard page: its cookie's path). */
export function sandboxPaymentUrlTemplate(baseUrl: string): string {
  return `${baseUrl}/dashboard/pay?offer={offer_id}&workspace={workspace_id}`;
}

/**
 * The base URL when `BASE_URL` is unset: the address the service listens on, so that the URL printed, the links
 * and the OAuth metadata (issuer, `resource`) name the host a local client actually dials. OAuth clients compare
 * those strings exactly (RFC 8414 §3.3, RFC 9728 §3.3): `localhost` in the metadata and `127.0.0.1` in the client
 * fail the check although both reach the same socket. A wildcard listens on loopback too; its loopback address
 * stands in for it.
 */
export function defaultBaseUrl(host: string, port: number): string {
  if (host === '0.0.0.0') return `http://127.0.0.1:${port}`;
  if (host === '::' || host === '[::]') return `http://[::1]:${port}`;
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return `http://${isIP(bare) === 6 ? `[${bare}]` : bare}:${port}`;
}

function parseDatabaseUrl(d: Env['database'], knobs: TestKnobs): DatabaseTarget {
  const url = d.DATABASE_URL;
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const waits = { connectMs: d.DATABASE_CONNECT_TIMEOUT, statementMs: d.DATABASE_STATEMENT_TIMEOUT, lockMs: d.DATABASE_LOCK_TIMEOUT };
    return { dialect: 'postgres', connectionString: url, waits };
  }
  const file = url.replace(/^(sqlite|file):/, '');
  if (file.length === 0) {
    throw new ConfigError('DATABASE_URL', 'DATABASE_URL: the sqlite: form needs a file path (sqlite:./data/service.db)');
  }
  return { dialect: 'sqlite', file, writeFailureHoldMs: knobs.SQLITE_WRITE_FAILURE_HOLD };
}

function decodeSecretKey(text: string): Buffer {
  return /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
}

/** Below this, renewals (every third of the lease) are so frequent that an ordinary pause loses the lease. */
const MIN_JOB_LEASE_MS = 1_000;

/**
 * The job lease against the steps a run makes: a lease must outlast the longest call made under it. A
 * running job renews its lease every third of it; the lease must still outlast any single step, so that a run
 * whose renewals fail (database unreachable) ends the call under way before another worker may take the job
 * over. A sandbox step lasts up to 1.5 × the sandbox delay (its jitter, `src/networks/sandbox.ts`).
 * @throws ConfigError naming JOB_LEASE
 */
function checkJobLease(leaseMs: number, sandboxDelayMs: number): void {
  if (leaseMs < MIN_JOB_LEASE_MS) {
    throw new ConfigError('JOB_LEASE', `JOB_LEASE must be at least ${MIN_JOB_LEASE_MS} ms: a running job renews its lease every third of it, and a shorter lease is lost to an ordinary pause (got ${leaseMs} ms)`);
  }
  const longestSandboxStep = Math.ceil(sandboxDelayMs * 1.5);
  if (leaseMs <= longestSandboxStep) {
    throw new ConfigError(
      'JOB_LEASE',
      `JOB_LEASE (${leaseMs} ms) must be longer than the longest sandbox call, ${longestSandboxStep} ms (1.5 × SANDBOX_DELAY ${sandboxDelayMs} ms): a lease shorter than one call is lost while the call runs`,
    );
  }
}

const MIN_IDEMPOTENCY_LEASE_MS = 2_000;

/** @throws ConfigError naming IDEMPOTENCY_LEASE */
function checkIdempotencyLease(leaseMs: number): number {
  if (leaseMs < MIN_IDEMPOTENCY_LEASE_MS) {
    throw new ConfigError(
      'IDEMPOTENCY_LEASE',
      `IDEMPOTENCY_LEASE must be at least ${MIN_IDEMPOTENCY_LEASE_MS} ms: a running request renews its key every quarter of it, and a shorter lease is lost to an ordinary pause (got ${leaseMs} ms)`,
    );
  }
  return leaseMs;
}

/**
 * Parses the environment into a `Config`. `overrides` are the test-only knobs of an in-process test; a spawned
 * process gets them through `SERVICE_TEST_OVERRIDES`.
 * @throws ConfigError naming the first variable whose value is unusable.
 */
export function parseConfig(raw: Record<string, string | undefined>, overrides: TestOverrides = {}): Config {
  const { env, legacyKnobs, testOverrides, deprecated } = readEnv(raw);
  const knobs = testKnobs(legacyKnobs, testOverrides, overrides);
  const { server: s, database: d, security: sec, workers: w, media: m, oauth: o, billing: b, networks: n, mail, sso } = env;
  const database = parseDatabaseUrl(d, knobs);
  if (database.dialect === 'postgres' && sec.SECRET_KEY === undefined) {
    throw new ConfigError('SECRET_KEY', 'SECRET_KEY is required when DATABASE_URL selects PostgreSQL');
  }
  checkJobLease(knobs.JOB_LEASE, knobs.SANDBOX_DELAY);
  const baseUrl = s.BASE_URL?.replace(/\/+$/, '');
  const { plans, prices, offers } = businessTables(b);
  const { BLUESKY_VIDEO_URL: blueskyVideoUrl, ...endpoints } = knobs;
  const networks = networkSettings({
    env: raw,
    endpoints,
    blueskyVideoUrl,
    linkedinApiVersion: n.LINKEDIN_API_VERSION,
    tiktok: { mode: n.TIKTOK_POST_MODE, appAudited: n.TIKTOK_APP_AUDITED, pullVideosFromUrl: n.TIKTOK_PULL_VIDEOS_FROM_URL },
  });
  return {
    port: s.PORT,
    host: s.HOST,
    baseUrl: baseUrl ?? (s.PORT === 0 ? undefined : defaultBaseUrl(s.HOST, s.PORT)),
    database,
    redisUrl: d.REDIS_URL,
    readyTimeoutMs: knobs.READY_TIMEOUT,
    logLevel: s.LOG_LEVEL,
    secretKey: sec.SECRET_KEY === undefined ? undefined : decodeSecretKey(sec.SECRET_KEY),
    allowLocalUrls: sec.ALLOW_LOCAL_URLS,
    rateLimitPerMinute: s.RATE_LIMIT_PER_MINUTE,
    openRateLimitPerMinute: s.OPEN_RATE_LIMIT_PER_MINUTE,
    signInFailures: { perAccount: s.SIGN_IN_FAILURES_PER_ACCOUNT, perAddress: s.SIGN_IN_FAILURES_PER_ADDRESS },
    bodyLimit: s.BODY_LIMIT.toLowerCase(),
    idempotencyLeaseMs: checkIdempotencyLease(knobs.IDEMPOTENCY_LEASE),
    publisher: {
      concurrency: w.WORKER_CONCURRENCY,
      perConnection: w.WORKER_PER_CONNECTION,
      leaseMs: knobs.JOB_LEASE,
      pollMs: knobs.WORKER_POLL,
      confirmIntervalMs: knobs.CONFIRM_INTERVAL,
      confirmDeadlineMs: knobs.CONFIRM_DEADLINE,
      lateCheckIntervalMs: knobs.LATE_CHECK_INTERVAL,
      lateCheckWindowMs: knobs.LATE_CHECK_WINDOW,
      retryDelaysMs: knobs.JOB_RETRY_DELAYS,
      publishDeadlineMs: knobs.PUBLISH_DEADLINE,
    },
    scheduler: { graceMs: w.SCHEDULE_GRACE, pollMs: knobs.WORKER_POLL, lanes: knobs.SCHEDULER_LANES, perTick: 500, batch: 25 },
    dispatcher: {
      concurrency: w.WEBHOOK_CONCURRENCY,
      perEndpoint: w.WEBHOOK_PER_ENDPOINT,
      // The lease outlives the longest attempt, so another worker never takes over a delivery still waiting.
      leaseMs: w.WEBHOOK_TIMEOUT + 5_000,
      pollMs: knobs.WORKER_POLL,
      timeoutMs: w.WEBHOOK_TIMEOUT,
    },
    oauthAccessTokenTtlSeconds: Math.floor(o.OAUTH_ACCESS_TOKEN_TTL / 1_000),
    clientMetadataDocuments: {
      enabled: o.OAUTH_CLIENT_METADATA_DOCUMENTS,
      fetchesPerMinute: knobs.OAUTH_CIMD_FETCHES_PER_MINUTE,
      maxBytes: knobs.OAUTH_CIMD_MAX_BYTES,
      timeoutMs: knobs.OAUTH_CIMD_TIMEOUT,
      cacheMaxSeconds: Math.floor(knobs.OAUTH_CIMD_CACHE_MAX / 1_000),
      failureCacheSeconds: Math.floor(knobs.OAUTH_CIMD_FAILURE_CACHE / 1_000),
    },
    sandboxDelayMs: knobs.SANDBOX_DELAY,
    mediaDir: m.MEDIA_DIR ?? join(database.dialect === 'sqlite' ? dirname(database.file) : './data', 'media'),
    mediaStore: mediaStoreSettings(m),
    plans,
    prices,
    offers,
    paymentUrlTemplate: b.PAYMENT_URL_TEMPLATE ?? sandboxPaymentUrlTemplate(baseUrl ?? defaultBaseUrl(s.HOST, s.PORT)),
    paymentWebhookSecret: b.PAYMENT_WEBHOOK_SECRET,
    sandboxPayments: b.PAYMENT_URL_TEMPLATE === undefined,
    networks,
    tokenExpiryWarningMs: w.TOKEN_EXPIRY_WARNING,
    auditRetentionMs: w.AUDIT_RETENTION,
    metricsToken: s.METRICS_TOKEN,
    role: s.SERVICE_ROLE,
    dashboardSession: { idleMs: sec.DASHBOARD_SESSION_IDLE, maxMs: sec.DASHBOARD_SESSION_MAX },
    trustProxy: parseTrustProxy(s.TRUST_PROXY) ?? false,
    mail: mailSettings(mail),
    sso: ssoSettings(sso),
    deprecatedSettings: deprecated,
  };
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
