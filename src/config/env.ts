import { isIP } from 'node:net';
import { z } from 'zod';
import { DEFAULT_POSTGRES_WAITS } from '../../db/connect.js';
import { type DurationUnit, duration, durationText, formatDuration } from './durations.js';
import { ConfigError } from './errors.js';
import { TEST_OVERRIDES_VARIABLE, type TestOverrideKey } from './test-overrides.js';
import { NETWORK_ENDPOINT_KEYS } from './networks.js';

/**
 * The environment an operator sets, grouped by concern. Every duration is text with a unit (`30s`, `10m`); the
 * names carry none. Parsing is strict so that a typo stops the process at start instead of misbehaving later.
 */

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

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

const httpUrl = (message = 'must be an http(s) URL') => z.url({ protocol: /^https?$/, message });

const PROXY_KEYWORDS = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** What express's `trust proxy` accepts, minus `true` (which would believe any client that sends the headers). */
export type TrustProxy = false | number | string[];

/** Parses `TRUST_PROXY`; undefined when the value names no proxy usably. */
export function parseTrustProxy(text: string): TrustProxy | undefined {
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

/** Listening, logging, limits and the role of this process. */
const server = z.object({
  PORT: z.coerce
    .number({ message: 'must be an integer between 0 and 65535' })
    .int({ message: 'must be an integer between 0 and 65535' })
    .min(0, { message: 'must be an integer between 0 and 65535' })
    .max(65535, { message: 'must be an integer between 0 and 65535' })
    .default(8080),
  // `localhost`, not `127.0.0.1`: browsers treat http://localhost as a secure context (passkeys work there) and
  // refuse WebAuthn on an IP address.
  HOST: z.string().min(1, { message: 'must not be empty' }).default('localhost'),
  BASE_URL: httpUrl().optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
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
  RATE_LIMIT_PER_MINUTE: positiveInt(600),
  OPEN_RATE_LIMIT_PER_MINUTE: positiveInt(120),
  SIGN_IN_FAILURES_PER_ACCOUNT: positiveInt(5),
  SIGN_IN_FAILURES_PER_ADDRESS: positiveInt(20),
  METRICS_TOKEN: z.string().min(16, { message: 'must be at least 16 characters' }).optional(),
  SERVICE_ROLE: z.enum(['all', 'api', 'worker'], { message: 'must be all, api or worker' }).default('all'),
});

/** Where the data lives, and the waits on PostgreSQL. */
const database = z.object({
  DATABASE_URL: z
    .string()
    .regex(/^(sqlite:|file:|postgres:\/\/|postgresql:\/\/)/, {
      message: 'must start with sqlite:, file:, postgres:// or postgresql://',
    })
    .default('sqlite:./data/service.db'),
  DATABASE_CONNECT_TIMEOUT: duration(formatDuration(DEFAULT_POSTGRES_WAITS.connectMs), { min: 0, note: '0 for no limit' }),
  DATABASE_STATEMENT_TIMEOUT: duration(formatDuration(DEFAULT_POSTGRES_WAITS.statementMs), { min: 0, note: '0 for no limit' }),
  DATABASE_LOCK_TIMEOUT: duration(formatDuration(DEFAULT_POSTGRES_WAITS.lockMs), { min: 0, note: '0 for no limit' }),
  /** The rate limiter's shared store when several processes serve (redis: or rediss:). */
  REDIS_URL: z.string().regex(/^rediss?:\/\/[^\s]+$/, { message: 'must be a redis:// or rediss:// URL' }).optional(),
});

/** Stored secrets, local addresses, dashboard sessions. */
const security = z.object({
  SECRET_KEY: z
    .string()
    .regex(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, {
      message: 'must be 32 bytes as 64 hex characters or 44 base64 characters',
    })
    .optional(),
  ALLOW_LOCAL_URLS: booleanText.default(false),
  DASHBOARD_SESSION_IDLE: duration('60m'),
  DASHBOARD_SESSION_MAX: duration('12h'),
});

/** The publisher, the scheduler and the webhook dispatcher. */
const workers = z.object({
  WORKER_CONCURRENCY: positiveInt(8),
  WORKER_PER_CONNECTION: positiveInt(2),
  SCHEDULE_GRACE: duration('1h'),
  WEBHOOK_TIMEOUT: duration('30s'),
  WEBHOOK_CONCURRENCY: positiveInt(64),
  WEBHOOK_PER_ENDPOINT: positiveInt(16),
  TOKEN_EXPIRY_WARNING: duration('7d'),
  // A shorter history than a month would not answer "who changed this last billing cycle".
  AUDIT_RETENTION: duration('365d', { min: 30 * 86_400_000 }),
});

/** Uploads: local disk or an S3-compatible bucket. */
const media = z.object({
  MEDIA_DIR: z.string().min(1).optional(),
  MEDIA_STORE: z.enum(['local', 's3'], { message: 'must be local or s3' }).default('local'),
  S3_BUCKET: z.string().min(1).optional(),
  S3_REGION: z.string().min(1).optional(),
  S3_ENDPOINT: httpUrl().optional(),
  S3_FORCE_PATH_STYLE: booleanText.default(false),
  S3_URL_TTL: duration('1h', { min: 1_000, max: 604_800_000 }),
  AWS_ACCESS_KEY_ID: z.string().min(1).optional(),
  AWS_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  AWS_SESSION_TOKEN: z.string().min(1).optional(),
});

/** The embedded OAuth server of the MCP door. */
const oauth = z.object({
  OAUTH_ACCESS_TOKEN_TTL: duration('24h', { min: 1_000 }),
  OAUTH_CLIENT_METADATA_DOCUMENTS: booleanText.default(true),
});

/** Plans, prices, offers and payments. */
const billing = z.object({
  CONFIG_FILE: z.string().min(1).optional(),
  PLANS_JSON: z.string().optional(),
  PRICES_JSON: z.string().optional(),
  OFFERS_JSON: z.string().optional(),
  PAYMENT_URL_TEMPLATE: z.string().min(1).optional(),
  PAYMENT_WEBHOOK_SECRET: z.string().min(16, { message: 'must be at least 16 characters' }).optional(),
});

/** Per-network choices beside the OAuth clients (`<NETWORK>_CLIENT_ID`, `<NETWORK>_CLIENT_SECRET`). */
const networks = z.object({
  TIKTOK_POST_MODE: z.enum(['direct', 'inbox']).default('direct'),
  TIKTOK_APP_AUDITED: booleanText.default(false),
  TIKTOK_PULL_VIDEOS_FROM_URL: booleanText.default(false),
  // LinkedIn serves each monthly version for about a year; an operator may pin another (docs: "LinkedIn versioning").
  LINKEDIN_API_VERSION: z.string().regex(/^\d{6}(\.\d{2})?$/, { message: 'must be a version such as 202610 (YYYYMM)' }).optional(),
});

/** Optional outgoing mail: invitations, verifications and password resets are mailed when set. */
const mail = z.object({
  /** `smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://…:465` (TLS from the start). */
  SMTP_URL: z.string().regex(/^smtps?:\/\/[^\s]+$/, { message: 'must be an smtp:// or smtps:// URL' }).optional(),
  /** The sender of every message (`Publisher <no-reply@example.com>`); required with SMTP_URL. */
  MAIL_FROM: z.string().min(3, { message: 'must be an address such as Publisher <no-reply@example.com>' }).optional(),
});

/** Optional single sign-on with an OpenID Connect provider (the dashboard's "Sign in with …" button). */
const sso = z.object({
  /** The provider's issuer URL; its `/.well-known/openid-configuration` is read at start. */
  SSO_ISSUER: httpUrl().optional(),
  SSO_CLIENT_ID: z.string().min(1).optional(),
  SSO_CLIENT_SECRET: z.string().min(1).optional(),
  /** Comma list of email domains whose people may join by signing in (`example.com,example.org`). */
  SSO_ALLOWED_DOMAINS: z
    .string()
    .regex(/^\s*[a-z0-9.-]+\.[a-z]{2,}\s*(,\s*[a-z0-9.-]+\.[a-z]{2,}\s*)*$/i, { message: 'must be a comma-separated list of domains such as example.com,example.org' })
    .optional(),
  /** The workspace people of an allowed domain join, and as what. */
  SSO_DEFAULT_WORKSPACE: z.string().regex(/^ws_[A-Za-z0-9]+$/, { message: 'must be a workspace id (ws_…)' }).optional(),
  SSO_DEFAULT_ROLE: z.enum(['admin', 'editor', 'contributor', 'viewer', 'client'], { message: 'must be admin, editor, contributor, viewer or client' }).default('viewer'),
  /** The button's label: "Sign in with <SSO_NAME>". */
  SSO_NAME: z.string().min(1).max(60, { message: 'must be at most 60 characters' }).default('single sign-on'),
});

const GROUPS = { server, database, security, workers, media, oauth, billing, networks, mail, sso } as const;

export type Env = { [G in keyof typeof GROUPS]: z.output<(typeof GROUPS)[G]> };

/** A name this release still reads, with the unit a bare number had under it. */
interface Renamed {
  old: string;
  now: string;
  unit?: DurationUnit;
  /** The knob left the settings: only the test-only overrides set it from the next release. */
  testOnly?: boolean;
}

/** Names of the previous release, honoured once more (with one deprecation line at start). */
const RENAMED: readonly Renamed[] = [
  { old: 'DATABASE_CONNECT_TIMEOUT_MS', now: 'DATABASE_CONNECT_TIMEOUT', unit: 'ms' },
  { old: 'DATABASE_STATEMENT_TIMEOUT_MS', now: 'DATABASE_STATEMENT_TIMEOUT', unit: 'ms' },
  { old: 'DATABASE_LOCK_TIMEOUT_MS', now: 'DATABASE_LOCK_TIMEOUT', unit: 'ms' },
  { old: 'DASHBOARD_SESSION_IDLE_MINUTES', now: 'DASHBOARD_SESSION_IDLE', unit: 'm' },
  { old: 'DASHBOARD_SESSION_MAX_HOURS', now: 'DASHBOARD_SESSION_MAX', unit: 'h' },
  { old: 'SCHEDULE_GRACE_MS', now: 'SCHEDULE_GRACE', unit: 'ms' },
  { old: 'WEBHOOK_TIMEOUT_MS', now: 'WEBHOOK_TIMEOUT', unit: 'ms' },
  { old: 'TOKEN_EXPIRY_WARNING_DAYS', now: 'TOKEN_EXPIRY_WARNING', unit: 'd' },
  { old: 'S3_URL_TTL_SECONDS', now: 'S3_URL_TTL', unit: 's' },
  { old: 'OAUTH_ACCESS_TOKEN_TTL_SECONDS', now: 'OAUTH_ACCESS_TOKEN_TTL', unit: 's' },
  ...(
    [
      ['WORKER_POLL_MS', 'WORKER_POLL', 'ms'],
      ['JOB_LEASE_MS', 'JOB_LEASE', 'ms'],
      ['IDEMPOTENCY_LEASE_MS', 'IDEMPOTENCY_LEASE', 'ms'],
      ['CONFIRM_INTERVAL_MS', 'CONFIRM_INTERVAL', 'ms'],
      ['CONFIRM_DEADLINE_MS', 'CONFIRM_DEADLINE', 'ms'],
      ['LATE_CHECK_INTERVAL_MS', 'LATE_CHECK_INTERVAL', 'ms'],
      ['LATE_CHECK_WINDOW_MS', 'LATE_CHECK_WINDOW', 'ms'],
      ['PUBLISH_DEADLINE_MS', 'PUBLISH_DEADLINE', 'ms'],
      ['JOB_RETRY_DELAYS_MS', 'JOB_RETRY_DELAYS', 'ms'],
      ['SCHEDULER_LANES', 'SCHEDULER_LANES', undefined],
      ['SANDBOX_DELAY_MS', 'SANDBOX_DELAY', 'ms'],
      ['READY_TIMEOUT_MS', 'READY_TIMEOUT', 'ms'],
      ['SQLITE_WRITE_FAILURE_HOLD_MS', 'SQLITE_WRITE_FAILURE_HOLD', 'ms'],
      ['OAUTH_CIMD_FETCHES_PER_MINUTE', 'OAUTH_CIMD_FETCHES_PER_MINUTE', undefined],
      ['OAUTH_CIMD_MAX_BYTES', 'OAUTH_CIMD_MAX_BYTES', undefined],
      ['OAUTH_CIMD_TIMEOUT_MS', 'OAUTH_CIMD_TIMEOUT', 'ms'],
      ['OAUTH_CIMD_CACHE_MAX_SECONDS', 'OAUTH_CIMD_CACHE_MAX', 's'],
      ['OAUTH_CIMD_FAILURE_CACHE_SECONDS', 'OAUTH_CIMD_FAILURE_CACHE', 's'],
      ['BLUESKY_VIDEO_URL', 'BLUESKY_VIDEO_URL', undefined],
    ] as const
  ).map(([old, now, unit]): Renamed => ({ old, now, unit, testOnly: true })),
  ...NETWORK_ENDPOINT_KEYS.map((key): Renamed => ({ old: key, now: key, testOnly: true })),
];

/** The environment read, with what the deprecated names set. */
export interface ReadEnv {
  env: Env;
  /** Test-only knobs still set through a deprecated variable, by knob, and the variable each came from. */
  legacyKnobs: { values: Partial<Record<TestOverrideKey, string>>; sources: Record<string, string> };
  /** `SERVICE_TEST_OVERRIDES` as given. */
  testOverrides: string | undefined;
  /** One entry per deprecated name in use, for the deprecation line. */
  deprecated: string[];
}

/**
 * Reads the environment into its groups.
 * @throws ConfigError naming the first variable whose value is unusable (the deprecated name when that set it).
 */
export function readEnv(raw: Record<string, string | undefined>): ReadEnv {
  // Empty strings mean "unset", as shells and .env files commonly produce them.
  const present = (name: string): string | undefined => (raw[name] === '' ? undefined : raw[name]);
  const values: Record<string, string | undefined> = {};
  for (const group of Object.values(GROUPS)) for (const name of Object.keys(group.shape)) values[name] = present(name);

  const cameFrom: Record<string, string> = {};
  const legacyKnobs: ReadEnv['legacyKnobs'] = { values: {}, sources: {} };
  const deprecated: string[] = [];
  for (const r of RENAMED) {
    const value = present(r.old);
    if (value === undefined) continue;
    const converted = r.unit === undefined ? value : value.split(',').map((v) => durationText(v, r.unit!)).join(',');
    if (r.testOnly) {
      legacyKnobs.values[r.now as TestOverrideKey] = converted;
      legacyKnobs.sources[r.now] = r.old;
      deprecated.push(`${r.old} (no longer a setting: its default applies from the next release)`);
    } else if (values[r.now] === undefined) {
      values[r.now] = converted;
      cameFrom[r.now] = r.old;
      deprecated.push(`${r.old} (now ${r.now}=${converted})`);
    } else {
      deprecated.push(`${r.old} (ignored: ${r.now} is set)`);
    }
  }

  const env = {} as Record<string, unknown>;
  for (const [name, group] of Object.entries(GROUPS)) {
    const parsed = group.safeParse(values);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const key = String(issue?.path[0] ?? name);
      const variable = cameFrom[key] ?? key;
      throw new ConfigError(variable, `${variable} ${issue?.message ?? 'is invalid'} (got ${JSON.stringify(raw[variable])})`);
    }
    env[name] = parsed.data;
  }
  return { env: env as Env, legacyKnobs, testOverrides: present(TEST_OVERRIDES_VARIABLE), deprecated };
}
