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
import type { Dispatcher } from 'undici';
import { createBrandsService } from './core/brands/brands.service.js';
import { createQueueService, type QueueService } from './core/scheduling/queue.service.js';
import { createConnectionsService } from './core/connections/connections.service.js';
import { createContentsService } from './core/contents/contents.service.js';
import { createIdempotencyService, type IdempotencySettings } from './core/idempotency/idempotency.service.js';
import { createMediaService } from './core/media/media.service.js';
import { createMetersService, type MetersService } from './core/meters/meters.service.js';
import { createConfiguredMediaStore } from './media/configured-store.js';
import { openMediaSource, sweepStaleDownloads } from './media/file-source.js';
import { createLogger, type Logger } from './observability/logger.js';
import { fetchMediaCapped, guardedMediaFetcher, probeMedia } from './media/probe.js';
import { createSafeDispatcher, guardedFetch, type OutboundPolicy } from './outbound/safe-fetch.js';
import { UNKNOWN_SIZE_MEDIA_CAP_BYTES } from './vocabulary/platforms.js';
import { createSandboxAdapter } from './networks/sandbox/adapter.js';
import type { NetworkDeps } from './networks/network-deps.js';
import { newId } from './core/ids.js';
import { sandboxStore } from '../db/repositories/sandbox.repo.js';
import { createNetworkRegistry, type NetworkRegistry } from './networks/registry.js';
import { createNetworkConnectService, type NetworkConnectService } from './core/connections/network-connect.service.js';
import { createConnectedAppsService } from './core/connected-apps/connected-apps.service.js';
import { createOAuthClientsService } from './core/oauth-clients/oauth-clients.service.js';
import { createGrantAccessService, type GrantAccessService } from './core/connected-apps/grant-access.js';
import { createWalletService, type WalletHooks, type WalletService } from './core/wallet/wallet.service.js';
import { createWebhooksService } from './core/webhooks/webhooks.service.js';
import { createSessionsService, type SessionsService } from './core/sessions/sessions.service.js';
import { createMembersService, type MembersService } from './core/members/members.service.js';
import { createInvitationsService, type InvitationsService } from './core/members/invitations.service.js';
import { type AccountsService, createAccountsService } from './core/accounts/accounts.service.js';
import type { Mailer } from './core/mail/mailer.js';
import { publicUrlProblem } from './outbound/url-rule.js';
import { createMaintenance } from './workers/maintenance.js';
import { type AuditService, createAuditService } from './core/audit/audit.service.js';
import { createPublisher } from './workers/publisher.js';
import { createScheduler } from './workers/scheduler.js';
import { createScheduledStart } from './core/scheduling/scheduled-start.js';
import { createMetrics, type Metrics } from './observability/metrics.js';
import { queueStats } from '../db/repositories/queue-stats.repo.js';
import { createWebhookDispatcher } from './workers/webhook-dispatcher.js';
import { claimMetaFlag, readMeta } from '../db/repositories/service-meta.repo.js';
import { createFailureThrottle, createRateLimiter, type RateLimiter, type RateStore } from './web/rate-limit.js';
import { Redis } from 'ioredis';
import { createSmtpMailer } from './mail/smtp-mailer.js';
import { createPasskeysService, type PasskeysService } from './core/accounts/passkeys.service.js';
import { createSsoService, type SsoService } from './core/accounts/sso.service.js';
import { createOpenIdRelyingParty } from './sso/openid-relying-party.js';

export interface Services {
  apiKeys: ReturnType<typeof createApiKeysService>;
  workspaces: ReturnType<typeof createWorkspacesService>;
  health: ReturnType<typeof createHealthService>;
  meters: MetersService;
  brands: ReturnType<typeof createBrandsService>;
  queue: QueueService;
  connections: ReturnType<typeof createConnectionsService>;
  contents: ReturnType<typeof createContentsService>;
  media: ReturnType<typeof createMediaService>;
  webhooks: ReturnType<typeof createWebhooksService>;
  oauthClients: ReturnType<typeof createOAuthClientsService>;
  connectedApps: ReturnType<typeof createConnectedAppsService>;
  wallet: WalletService;
  networkConnect: NetworkConnectService;
  sessions: SessionsService;
  grantAccess: GrantAccessService;
  members: MembersService;
  invitations: InvitationsService;
  accounts: AccountsService;
  passkeys: PasskeysService;
  /** Single sign-on with the configured OpenID provider; null when SSO_ISSUER is unset. */
  sso: SsoService | null;
  audit: AuditService;
}

/** Everything a process needs, wired once. */
export interface Container {
  config: Config;
  db: Db;
  clock: Clock;
  logger: Logger;
  secretKey: Buffer;
  /** Sends mail when SMTP is configured; null otherwise (one-time links are then shown to whoever asked). */
  mailer: Mailer | null;
  services: Services;
  /** Spec 8's per-workspace budget, shared by REST, MCP and the dashboard. */
  limiter: RateLimiter;
  /** Per client address, for the open doors (verify, OAuth registration and token, the consent form). */
  ipLimiter: RateLimiter;
  /** A further limiter of `perMinute` on the same store, its keys apart under `name`. */
  rateLimiter(name: string, perMinute: number): RateLimiter;
  networks: NetworkRegistry;
  metrics: Metrics;
  publisher: ReturnType<typeof createPublisher>;
  /** Starts scheduled contents when due (tests drive `tick` with a controlled clock). */
  scheduler: ReturnType<typeof createScheduler>;
  dispatcher: ReturnType<typeof createWebhookDispatcher>;
  /** Starts the background workers (not done by `createContainer`, so tests and the CLI can drive them). */
  startWorkers(): void;
  close(): Promise<void>;
}

export interface ContainerOptions {
  clock?: Clock;
  logger?: Logger;
  walletHooks?: WalletHooks;
  /** Idempotency claim and wait durations (tests shorten them). */
  idempotency?: Partial<IdempotencySettings>;
  /** Where mail goes instead of the configured server (tests capture it). */
  mailer?: Mailer;
}

/** The outbound policy for media and webhooks: public HTTPS only, unless local URLs are allowed for testing. */
function outbound(config: Config): { policy: OutboundPolicy; dispatcher: Dispatcher } {
  const policy: OutboundPolicy = { allowLocal: config.allowLocalUrls };
  return { policy, dispatcher: createSafeDispatcher(policy) };
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

/**
 * Where the rate limits count: Redis when REDIS_URL is set (the scale-out engine for hot counters), else the
 * database when several processes share it (PostgreSQL), else this process's memory (SQLite: one serving process,
 * which `startService` enforces).
 */
async function rateStore(config: Config, db: Db, logger: Logger, now: number): Promise<{ store: RateStore; close(): Promise<void> }> {
  if (config.redisUrl !== undefined) {
    // Keys carry the installation's id, kept in its database: processes of one installation share their budgets,
    // and installations (or test suites) sharing one Redis never meet.
    await claimMetaFlag(db.kysely, 'installation_id', newId('inst'), now);
    const installation = (await readMeta(db.kysely, 'installation_id')) ?? 'inst';
    // No offline queue: a command while disconnected fails at once, so the limiter's insurance counts instead of
    // requests waiting for Redis (rate-limiter-flexible's advice for ioredis).
    const client = new Redis(config.redisUrl, { lazyConnect: true, enableOfflineQueue: false });
    let reachable = true;
    client.on('ready', () => {
      if (!reachable) logger.info('Redis reachable again: rate limits count there again');
      reachable = true;
    });
    client.on('error', (err: Error) => {
      if (reachable) logger.warn({ err }, 'Redis unreachable: each process counts rate limits in its own memory until it is back');
      reachable = false;
    });
    // Not fatal at start either: ioredis keeps reconnecting and the insurance counts meanwhile.
    await client.connect().catch(() => undefined);
    return { store: { kind: 'redis', client, keyPrefix: `rl:${installation}` }, close: async () => client.disconnect() };
  }
  if (db.dialect === 'postgres') return { store: { kind: 'postgres', pool: db.pool, table: 'rate_limits' }, close: async () => undefined };
  return { store: { kind: 'memory' }, close: async () => undefined };
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
    const metrics = createMetrics(() => queueStats(db.kysely, clock.now()));
    const net = outbound(config);
    const meters = createMetersService({ ...deps, plans: config.plans });
    const wallet = createWalletService({
      ...deps,
      meters,
      prices: config.prices,
      offers: config.offers,
      paymentUrlTemplate: config.paymentUrlTemplate,
      ...(options.walletHooks ? { hooks: options.walletHooks } : {}),
    });
    const downloadDir = join(config.mediaDir, '.downloads');
    const media = await createConfiguredMediaStore(config, { clock, secretKey, downloadDir });
    const mediaLinks = media.links;
    const networkDeps: NetworkDeps = {
      // Network APIs are configured, trusted hosts: plain fetch. Media addresses go through the guard.
      fetch: globalThis.fetch,
      userHostFetch: guardedFetch(net.policy, net.dispatcher),
      now: () => clock.now(),
      sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
      log: (message, details) => logger.warn(details, message),
      // Our own uploads come from the store (a bucket when hosts share one); public addresses through the guard.
      openMedia: (url) =>
        url.startsWith('file://') ? media.store.open(url.slice('file://'.length)) : openMediaSource(url, { downloadDir, policy: net.policy, fetch: { dispatcher: net.dispatcher, timeoutMs: 30 * 60_000 } }),
    };
    // The sandbox keeps its posts in its own tables; it gets them as a store, like its clock and ids.
    const sandboxTables = sandboxStore(db.kysely);
    const sandbox = createSandboxAdapter(networkDeps, {
      store: sandboxTables,
      newId,
      delayMs: config.sandboxDelayMs,
    });
    const networks = createNetworkRegistry(config.networks, networkDeps, sandbox);
    const networkConnect = createNetworkConnectService({
      ...deps,
      meters,
      secretKey,
      oauthFor: (platform) => networks.oauthFor(platform),
      passwordLoginFor: (platform) => networks.passwordLoginFor(platform),
      liveAvailable: (platform) => networks.liveAvailable(platform),
      redirectUriFor: (platform) => `${config.baseUrl ?? ''}/api/v1/oauth/networks/${platform}/callback`,
    });
    const publisher = createPublisher({
      ...deps,
      dialect: db.dialect,
      logger,
      settings: config.publisher,
      adapterFor: (mode, platform) => networks.adapterFor(mode, platform),
      credentialsFor: (connectionId) => networkConnect.credentialsFor(connectionId),
      publicMediaUrl: (mediaId) => mediaLinks.linkFor(mediaId),
      refundJob: (tx, jobId, workspaceId) => wallet.refundJob(tx, jobId, workspaceId),
      onFinal: (platform, status, code) => metrics.jobFinished(platform, status, code),
      checkUnknownSizeMedia: async (url) => {
        const fetched = await fetchMediaCapped(url, UNKNOWN_SIZE_MEDIA_CAP_BYTES, net.policy, { dispatcher: net.dispatcher });
        return fetched.ok ? { ok: true } : { ok: false, tooLarge: fetched.reason === 'too_large' };
      },
    });
    const scheduler = createScheduler({
      start: createScheduledStart({ ...deps, wallet, graceMs: config.scheduler.graceMs }),
      dialect: db.dialect,
      logger,
      settings: config.scheduler,
      onStarted: () => publisher.nudge(),
      onOutcome: (o) => metrics.scheduledHandled(o.kind, o.kind === 'started' ? clock.now() - o.publishAt : null),
    });
    const dispatcher = createWebhookDispatcher({
      ...deps,
      dialect: db.dialect,
      logger,
      secretKey,
      http: net.dispatcher,
      allowLocal: config.allowLocalUrls,
      settings: config.dispatcher,
      onAttempt: (status) => metrics.deliveryAttempted(status),
    });
    const rates = await rateStore(config, db, logger, clock.now());
    const smtp = options.mailer !== undefined || config.mail === null ? null : createSmtpMailer(config.mail);
    const rateLimiter = (name: string, perMinute: number) => createRateLimiter(rates.store, perMinute, name);
    const apiKeys = createApiKeysService(deps);
    const sessions = createSessionsService({ ...deps, apiKeys, ...config.dashboardSession });
    // Outgoing mail over SMTP when SMTP_URL is set; tests pass their own to capture it.
    const mailer: Mailer | null = options.mailer ?? smtp;
    const onMailFailure = (err: unknown, what: string) => logger.warn({ err }, `mail: sending the ${what} failed`);
    // Password guessing: by default 5 failures per account and 20 per client address within 15 minutes (OWASP's
    // authentication cheat sheet), counted on the rate store the processes share.
    const accounts = createAccountsService({
      ...deps,
      secretKey,
      sessions,
      mailer,
      onMailFailure,
      baseUrl: config.baseUrl ?? '',
      perAccount: createFailureThrottle(rates.store, { failures: config.signInFailures.perAccount, windowSeconds: 15 * 60, name: 'signin-account' }),
      perAddress: createFailureThrottle(rates.store, { failures: config.signInFailures.perAddress, windowSeconds: 15 * 60, name: 'signin-address' }),
    });
    const sso =
      config.sso === null
        ? null
        : createSsoService({
            ...deps,
            sessions,
            label: config.sso.name,
            policy: { allowedDomains: config.sso.allowedDomains, defaultWorkspaceId: config.sso.defaultWorkspaceId, defaultRole: config.sso.defaultRole },
            provider: createOpenIdRelyingParty(
              { ...config.sso, redirectUri: `${config.baseUrl ?? ''}/dashboard/sso/callback` },
              (err, step) => logger.warn({ err }, `single sign-on: the provider's ${step} failed`),
            ),
          });
    const passkeys = createPasskeysService({ ...deps, sessions, baseUrl: config.baseUrl ?? `http://localhost:${config.port}`, rpName: 'Multi-network publisher' });
    const audit = createAuditService(deps);
    const maintenance = createMaintenance({
      db: db.kysely,
      clock,
      logger,
      everyMs: 10 * 60_000,
      sweepConnections: () => networkConnect.sweepExpiring(config.tokenExpiryWarningMs),
      sweepSessions: async () => (await sessions.sweep()) + (await passkeys.sweepChallenges()),
      sweepFiles: () => sweepStaleDownloads(downloadDir, 86_400_000),
      sweepAudit: () => audit.sweep(config.auditRetentionMs),
    });
    return {
      config,
      db,
      clock,
      logger,
      secretKey,
      mailer,
      services: {
        apiKeys,
        sessions,
        members: createMembersService(deps),
        invitations: createInvitationsService({ ...deps, baseUrl: config.baseUrl ?? '', mailer, onMailFailure }),
        accounts,
        passkeys,
        sso,
        audit,
        workspaces: createWorkspacesService({ ...deps, planNames: Object.keys(config.plans) }),
        health: createHealthService({ db: db.kysely, deadlineMs: config.readyTimeoutMs, recentWriteFailure: () => db.recentWriteFailure() }),
        meters,
        brands: createBrandsService({ ...deps, meters }),
        queue: createQueueService(deps),
        connections: createConnectionsService({ ...deps, meters }),
        contents: createContentsService({
          ...deps,
          meters,
          idempotency: createIdempotencyService({
            ...deps,
            settings: { lockMs: config.idempotencyLeaseMs, heartbeatMs: config.idempotencyLeaseMs / 4, ...options.idempotency },
          }),
          probeMedia: (url, signal) => probeMedia(url, net.policy, { dispatcher: net.dispatcher, signal }),
          wallet,
        }),
        wallet,
        media: createMediaService({ ...deps, meters, store: media.store, links: mediaLinks, fetcher: guardedMediaFetcher(net.policy, net.dispatcher) }),
        oauthClients: createOAuthClientsService({ ...deps, baseUrl: config.baseUrl ?? '' }),
        connectedApps: createConnectedAppsService(deps),
        grantAccess: createGrantAccessService({ ...deps, apiKeys }),
        networkConnect,
        webhooks: createWebhooksService({ ...deps, meters, secretKey, checkUrl: (url) => publicUrlProblem(url, config.allowLocalUrls) }),
      },
      limiter: rateLimiter('ws', config.rateLimitPerMinute),
      ipLimiter: rateLimiter('ip', config.openRateLimitPerMinute),
      rateLimiter,
      networks,
      metrics,
      publisher,
      scheduler,
      dispatcher,
      startWorkers: () => {
        scheduler.start();
        publisher.start();
        dispatcher.start();
        maintenance.start();
      },
      close: async () => {
        maintenance.stop();
        await scheduler.stop().catch(() => undefined);
        await publisher.stop();
        await dispatcher.stop();
        await net.dispatcher.close();
        media.close();
        await rates.close();
        smtp?.close();
        await db.close();
      },
    };
  } catch (err) {
    await db.close();
    throw err;
  }
}
