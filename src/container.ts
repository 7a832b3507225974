import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Kysely } from 'kysely';
import { connect, type Db } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import type { Config } from './config.js';
import { createApiKeysService } from './core/api-keys/api-keys.service.js';
import { type Clock, systemClock } from './core/clock.js';
import { createHealthService } from './core/health.js';
import { createWorkspacesService } from './core/workspaces/workspaces.service.js';
import { createLogger, type Logger } from './logger.js';
import { createRateLimiter, type WorkspaceRateLimiter } from './rate-limiter.js';

export interface Services {
  apiKeys: ReturnType<typeof createApiKeysService>;
  workspaces: ReturnType<typeof createWorkspacesService>;
  health: ReturnType<typeof createHealthService>;
}

/** Everything a process needs, wired once. */
export interface Container {
  config: Config;
  db: Db;
  clock: Clock;
  logger: Logger;
  secretKey: Buffer;
  services: Services;
  limiter: WorkspaceRateLimiter;
  close(): Promise<void>;
}

export interface ContainerOptions {
  clock?: Clock;
  logger?: Logger;
}

/**
 * SQLite installations keep their encryption key beside the database, created on first use; PostgreSQL
 * deployments must pass SECRET_KEY (config enforces it) because processes on several hosts share the data.
 */
function resolveSecretKey(config: Config): Buffer {
  if (config.secretKey) return config.secretKey;
  if (config.database.dialect !== 'sqlite') throw new Error('SECRET_KEY is required with PostgreSQL');
  const file = join(dirname(config.database.file), 'secret.key');
  try {
    writeFileSync(file, randomBytes(32).toString('hex'), { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
}

/** Opens and migrates the database and builds the services. */
export async function createContainer(config: Config, options: ContainerOptions = {}): Promise<Container> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const clock = options.clock ?? systemClock;
  const db = connect(config.database);
  try {
    const secretKey = resolveSecretKey(config);
    await migrateToLatest(db.kysely as unknown as Kysely<unknown>, db.dialect);
    const deps = { db: db.kysely, clock };
    return {
      config,
      db,
      clock,
      logger,
      secretKey,
      services: {
        apiKeys: createApiKeysService(deps),
        workspaces: createWorkspacesService(deps),
        health: createHealthService(deps),
      },
      limiter: createRateLimiter(db, config.rateLimitPerMinute),
      close: () => db.close(),
    };
  } catch (err) {
    await db.close();
    throw err;
  }
}
