import { z } from 'zod';
import type { DatabaseTarget } from '../db/connect.js';

/**
 * The service configuration. This module is the only reader of `process.env`: everything else receives a
 * `Config`. Parsing is strict so that a typo stops the process at start instead of misbehaving later.
 */

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const booleanText = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

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
  LOG_LEVEL: z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  SECRET_KEY: z
    .string()
    .regex(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, {
      message: 'must be 32 bytes as 64 hex characters or 44 base64 characters',
    })
    .optional(),
  ALLOW_LOCAL_URLS: booleanText.default(false),
  RATE_LIMIT_PER_MINUTE: z.coerce
    .number({ message: 'must be a positive integer' })
    .int({ message: 'must be a positive integer' })
    .positive({ message: 'must be a positive integer' })
    .default(600),
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
  logLevel: (typeof LOG_LEVELS)[number];
  /** 32-byte key for AES-256-GCM of stored secrets; undefined means "use the one kept in the data folder". */
  secretKey: Buffer | undefined;
  allowLocalUrls: boolean;
  rateLimitPerMinute: number;
  bodyLimit: string;
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

function parseDatabaseUrl(url: string): DatabaseTarget {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    return { dialect: 'postgres', connectionString: url };
  }
  const file = url.replace(/^(sqlite|file):/, '');
  if (file.length === 0) {
    throw new ConfigError('DATABASE_URL', 'DATABASE_URL: the sqlite: form needs a file path (sqlite:./data/service.db)');
  }
  return { dialect: 'sqlite', file };
}

function decodeSecretKey(text: string): Buffer {
  return /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
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
  const database = parseDatabaseUrl(e.DATABASE_URL);
  if (database.dialect === 'postgres' && e.SECRET_KEY === undefined) {
    throw new ConfigError('SECRET_KEY', 'SECRET_KEY is required when DATABASE_URL selects PostgreSQL');
  }
  return {
    port: e.PORT,
    host: e.HOST,
    baseUrl: e.BASE_URL?.replace(/\/+$/, '') ?? (e.PORT === 0 ? undefined : `http://localhost:${e.PORT}`),
    database,
    logLevel: e.LOG_LEVEL,
    secretKey: e.SECRET_KEY === undefined ? undefined : decodeSecretKey(e.SECRET_KEY),
    allowLocalUrls: e.ALLOW_LOCAL_URLS,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    bodyLimit: e.BODY_LIMIT.toLowerCase(),
  };
}

/** Reads the process environment. */
export function loadConfig(): Config {
  return parseConfig(process.env);
}
