import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { findBrand } from '../../../db/repositories/brands.repo.js';
import {
  type ConnectionRow,
  findConnection,
  findConnectionById,
  connectionsExpiringBefore,
  findConnectionTokens,
  insertConnection,
  claimTokenRefresh,
  markExpiryWarned,
  releaseTokenRefresh,
  renameConnection,
  replaceConnectionTokens,
  tokenRefreshHeld,
  storeConnectionTokens,
  transitionConnection,
} from '../../../db/repositories/connections.repo.js';
import { consumeNetworkState, findInstanceApp, forgetInstanceApp, insertNetworkState, keepInstanceApp, type NetworkStateRow } from '../../../db/repositories/network-oauth.repo.js';
import type { Database } from '../../../db/schema.js';
import type { PlatformSlug } from '../../vocabulary/platforms.js';
import { PLATFORMS } from '../../vocabulary/platforms.js';
import type { LiveCredentials } from '../../networks/adapter.js';
import type { InstanceApp, NetworkOAuth, NetworkPasswordLogin, NetworkTokens, TokenResult } from '../../networks/network-oauth.js';
import { brandNotFound } from '../brands/brands.service.js';
import { type Clock, toIso } from '../clock.js';
import { ServiceError } from '../errors.js';
import { recordConnectionExpired } from '../events/events.js';
import { newId } from '../ids.js';
import type { MetersService } from '../meters/meters.service.js';
import { seesBrand } from '../permissions/authorize.js';
import type { Permission } from '../permissions/roles.js';
import type { Principal } from '../principal.js';
import { listPlatforms, type PlatformList } from '../platforms.js';
import { open, seal } from '../secret-box.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import { recordAudit, type SystemActor } from '../audit/record.js';
import { connectionTarget } from './connections.service.js';
import { renderConnection } from './connections.service.js';
import { REFRESH_AHEAD_MS, REFRESH_BEFORE_PUBLISH_MS, refreshDue } from './token-refresh.js';
import type { AppPasswordSignIn, Connection, PublishTargetList, StartedOAuth } from './connections.schema.js';
import { instanceOrigin } from './instance-origin.js';

/** A renewal holds a connection at most this long (its network call has shorter deadlines). */
const REFRESH_LEASE_MS = 30_000;
const RENEWAL_POLL_MS = 50;

/** A user has this long to finish the network's consent screen. */
const STATE_TTL_MS = 15 * 60_000;

export type NetworkConnectService = ReturnType<typeof createNetworkConnectService>;

/**
 * Live connections through each network's OAuth (spec 4.6 `startOAuthConnection`): start (new or reconnect),
 * the callback, tokens sealed at rest, refresh before expiry, and expiry.
 */
export function createNetworkConnectService(deps: {
  db: Kysely<Database>;
  clock: Clock;
  meters: MetersService;
  secretKey: Buffer;
  oauthFor(platform: PlatformSlug): NetworkOAuth | null;
  passwordLoginFor(platform: PlatformSlug): NetworkPasswordLogin | null;
  liveAvailable(platform: PlatformSlug): boolean;
  redirectUriFor(platform: PlatformSlug): string;
}) {
  const { db, clock, meters } = deps;

  function oauthOrRefuse(platform: PlatformSlug): NetworkOAuth {
    const oauth = deps.oauthFor(platform);
    if (!oauth) {
      throw new ServiceError('platform_not_supported', `Live connections to ${PLATFORMS[platform].name} are not configured on this installation (${platform.toUpperCase()}_CLIENT_ID).`, {
        platform_slug: platform,
      });
    }
    return oauth;
  }

  const invalid = (path: string, message: string) => new ServiceError('validation_failed', `${path}: ${message}`, { fields: [{ path, message }] });

  /** This service's app on the user's server: registered on first use, then kept (the secret sealed). */
  async function appOn(platform: PlatformSlug, oauth: NetworkOAuth, origin: string): Promise<InstanceApp> {
    const redirectUri = deps.redirectUriFor(platform);
    let kept = await findInstanceApp(db, platform, origin, redirectUri);
    if (!kept) {
      if (!oauth.registerApp) throw new Error(`${platform} has per-server OAuth but no registerApp`);
      const registered = await oauth.registerApp({ origin, redirectUri });
      if (!registered.ok) throw invalid('instance', `${origin} refused to register this service as an app (${registered.message})`);
      kept = await keepInstanceApp(db, platform, origin, redirectUri, { clientId: registered.app.clientId, clientSecretSealed: seal(deps.secretKey, registered.app.clientSecret) }, clock.now());
    }
    return { origin, clientId: kept.clientId, clientSecret: open(deps.secretKey, kept.clientSecretSealed) };
  }

  async function begin(workspaceId: string, brandId: string, platform: PlatformSlug, connectionId: string | null, instance: string | null): Promise<StartedOAuth> {
    const oauth = oauthOrRefuse(platform);
    const perServer = PLATFORMS[platform].connect === 'instance_oauth';
    if (perServer && instance === null) throw invalid('instance', `${PLATFORMS[platform].name} needs the address of the user's server (e.g. mastodon.social)`);
    if (!perServer && instance !== null) throw invalid('instance', `${PLATFORMS[platform].name} has one server: leave instance out`);
    const origin = instance === null ? null : instanceOrigin(instance);
    if (origin === undefined) throw invalid('instance', 'must be a host name or an https:// address with no path (e.g. mastodon.social)');
    const app = origin === null ? undefined : await appOn(platform, oauth, origin);
    const now = clock.now();
    const state = randomBytes(24).toString('base64url');
    const expiresAt = now + STATE_TTL_MS;
    await insertNetworkState(db, { state, workspaceId, brandId, connectionId, platformSlug: platform, expiresAt, instanceOrigin: origin }, now);
    return { authorization_url: oauth.authorizationUrl({ state, redirectUri: deps.redirectUriFor(platform), ...(app ? { app } : {}) }), state, expires_at: toIso(expiresAt) };
  }

  function passwordLoginOrRefuse(platform: PlatformSlug): NetworkPasswordLogin {
    const login = deps.passwordLoginFor(platform);
    if (!login) {
      const how = PLATFORMS[platform].connect === 'app_password' ? 'is not available on this installation' : "connects through the network's OAuth (startOAuthConnection), not an app password";
      throw new ServiceError('platform_not_supported', `${PLATFORMS[platform].name} ${how}.`, { platform_slug: platform });
    }
    return login;
  }

  /**
   * Keeps the tokens a sign-in or a code exchange gave: a new connection (one slot of the connections meter), or
   * the reconnected one made active again. One transaction, so a refused meter leaves nothing behind.
   */
  async function keepConnection(
    target: Pick<NetworkStateRow, 'workspaceId' | 'brandId' | 'connectionId'>,
    platform: PlatformSlug,
    tokens: NetworkTokens,
    actor: Principal | SystemActor,
  ): Promise<Connection> {
    const now = clock.now();
    const stored = { sealed: sealTokens(tokens), expiresAt: tokens.expiresAt, accountId: tokens.accountId };
    return db.transaction().execute(async (tx) => {
      if (target.connectionId !== null) {
        const existing = await findConnectionById(tx, target.connectionId);
        if (!existing) throw new ServiceError('not_found', 'The connection being reconnected no longer exists.');
        // A deactivated connection coming back takes its slot again.
        if (existing.status === 'inactive') await meters.consume(tx, target.workspaceId, [{ meter: 'connections', amount: 1 }]);
        await storeConnectionTokens(tx, existing.id, stored, now);
        await recordAudit(tx, actor, 'connection.reconnected', connectionTarget(existing), now, { previous_status: existing.status });
        return renderConnection({ ...existing, status: 'active', statusReason: null, updatedAt: now });
      }
      const conn: ConnectionRow = {
        id: newId('conn_'),
        workspaceId: target.workspaceId,
        brandId: target.brandId,
        platformSlug: platform,
        mode: 'live',
        name: tokens.accountName,
        status: 'active',
        statusReason: null,
        createdAt: now,
        updatedAt: now,
      };
      await meters.consume(tx, target.workspaceId, [{ meter: 'connections', amount: 1 }]);
      await insertConnection(tx, conn);
      await storeConnectionTokens(tx, conn.id, stored, now);
      await recordAudit(tx, actor, 'connection.created', connectionTarget(conn), now, { brand_id: conn.brandId, platform, mode: 'live' });
      return renderConnection(conn);
    });
  }

  /**
   * Renews tokens the way the network can: its OAuth refresh, or an app-password session's own refresh. `onUse`:
   * access tokens that live hours (X, TikTok, Bluesky) are renewed when a job needs them, not ahead by the sweep.
   */
  function refresherOf(platform: PlatformSlug): { refresh(tokens: NetworkTokens): Promise<TokenResult>; onUse: boolean } | null {
    const oauth = deps.oauthFor(platform);
    if (oauth?.refresh) return { refresh: (t) => oauth.refresh!(t), onUse: oauth.refreshOnUse === true };
    const login = deps.passwordLoginFor(platform);
    return login ? { refresh: (t) => login.refresh(t), onUse: login.refreshOnUse === true } : null;
  }

  function sealTokens(tokens: NetworkTokens): string {
    return seal(deps.secretKey, JSON.stringify(tokens));
  }

  /**
   * Waits (real time, in short steps) for the renewal another caller holds: its tokens once stored, or whatever
   * the connection holds when it lets go (null if it expired the connection).
   */
  async function awaitOtherRenewal(connectionId: string, previous: string): Promise<NetworkTokens | null> {
    for (let waited = 0; waited < REFRESH_LEASE_MS; waited += RENEWAL_POLL_MS) {
      await new Promise((r) => setTimeout(r, RENEWAL_POLL_MS));
      const row = await findConnectionTokens(db, connectionId);
      if (row?.sealed && row.sealed !== previous) return openTokens(row.sealed);
      if (!(await tokenRefreshHeld(db, connectionId, clock.now()))) break;
    }
    const conn = await findConnectionById(db, connectionId);
    const row = await findConnectionTokens(db, connectionId);
    return conn?.status === 'active' && row?.sealed ? openTokens(row.sealed) : null;
  }

  /**
   * A live connection of a network with several places per account, with its tokens. The refusals give the true
   * reason, in this order: the network has no places at all (its static description says so, configured or
   * not); a sandbox connection has none to list; live connections to the network are not configured here.
   */
  async function targetable(principal: Principal, workspaceId: string, connectionId: string, permission: Permission) {
    assertWorkspaceAccess(principal, workspaceId, permission);
    const conn = await findConnection(db, workspaceId, connectionId);
    if (!conn || !seesBrand(principal, conn.brandId)) throw new ServiceError('not_found', `Connection ${connectionId} was not found in this workspace.`);
    const platform = conn.platformSlug as PlatformSlug;
    const { name, places } = PLATFORMS[platform];
    if (places === null) throw new ServiceError('platform_not_supported', `${name} publishes to the account itself: there is no place to choose.`, { platform_slug: platform });
    if (conn.mode !== 'live') throw invalid('connection', `a sandbox connection has no network places to choose from (${name} ${places} are listed on a live connection)`);
    const oauth = oauthOrRefuse(platform);
    const { listTargets, retarget } = oauth;
    // The table says the network has places, so its OAuth module must list and choose them: a bug otherwise.
    if (!listTargets || !retarget) throw new Error(`${platform}: PLATFORMS says ${places} but its OAuth module cannot list them`);
    const row = await findConnectionTokens(db, conn.id);
    if (!row?.sealed) throw invalid('connection', 'the connection has no network authorization; reconnect it');
    return { conn, listTargets: listTargets.bind(oauth), retarget: retarget.bind(oauth), tokens: openTokens(row.sealed), sealed: row.sealed };
  }

  const openTokens = (sealed: string) => JSON.parse(open(deps.secretKey, sealed)) as NetworkTokens;

  return {
    /**
     * The platform catalogue (spec 4.6 listPlatforms) with `live_available` true exactly where `start` can
     * begin a network's OAuth here. Every door answers from this one function, so none can say otherwise.
     */
    platforms(): PlatformList {
      return listPlatforms((platform) => deps.liveAvailable(platform));
    },

    /**
     * Starts connecting a new account of `platform` to a brand: returns the network's authorization URL.
     * @throws ServiceError `not_found` (brand), `platform_not_supported` (network not configured).
     */
    async start(principal: Principal, workspaceId: string, brandId: string, platform: PlatformSlug, options: { instance?: string | undefined } = {}): Promise<StartedOAuth> {
      assertWorkspaceAccess(principal, workspaceId, 'connections.manage');
      if (!seesBrand(principal, brandId) || !(await findBrand(db, workspaceId, brandId))) throw brandNotFound(brandId);
      if (PLATFORMS[platform].connect === 'app_password') {
        throw new ServiceError('platform_not_supported', `${PLATFORMS[platform].name} connects with an app password, not OAuth: POST /api/v1/workspaces/${workspaceId}/brands/${brandId}/connections/app-password.`, {
          platform_slug: platform,
        });
      }
      return begin(workspaceId, brandId, platform, null, options.instance ?? null);
    },

    /**
     * Starts re-authorizing an existing live connection (e.g. expired): the callback keeps its id and history.
     * @throws ServiceError `not_found`, `validation_failed` (a sandbox connection), `platform_not_supported`.
     */
    async startReconnect(principal: Principal, workspaceId: string, connectionId: string): Promise<StartedOAuth> {
      assertWorkspaceAccess(principal, workspaceId, 'connections.manage');
      const conn = await findConnection(db, workspaceId, connectionId);
      if (!conn || !seesBrand(principal, conn.brandId)) throw new ServiceError('not_found', `Connection ${connectionId} was not found in this workspace.`);
      if (conn.mode !== 'live') throw new ServiceError('validation_failed', 'connection: sandbox connections have no network authorization to renew');
      const platform = conn.platformSlug as PlatformSlug;
      if (PLATFORMS[platform].connect === 'app_password') {
        throw invalid('connection', `${PLATFORMS[platform].name} reconnects with a new app password (POST …/connections/${conn.id}/app-password)`);
      }
      // A per-server network reconnects on the server the account lives on (kept with its id).
      const instance = PLATFORMS[platform].connect === 'instance_oauth' ? ((await this.tokensOf(conn.id))?.accountId.split('|')[0] ?? null) : null;
      return begin(workspaceId, conn.brandId, platform, conn.id, instance);
    },

    /**
     * Connects an account with its app password (Bluesky): the network's sign-in answers with a session whose
     * tokens are kept like OAuth ones; the password is used once and never stored. With `connectionId`, renews
     * that connection instead (after it expired).
     * @throws ServiceError `not_found`, `validation_failed` (refused sign-in), `platform_not_supported`, `limit_reached`.
     */
    async signIn(principal: Principal, workspaceId: string, target: { brandId: string; platform: PlatformSlug } | { connectionId: string }, input: AppPasswordSignIn): Promise<Connection> {
      assertWorkspaceAccess(principal, workspaceId, 'connections.manage');
      let brandId: string;
      let platform: PlatformSlug;
      let connectionId: string | null = null;
      let identifier = input.identifier;
      if ('connectionId' in target) {
        const conn = await findConnection(db, workspaceId, target.connectionId);
        if (!conn || !seesBrand(principal, conn.brandId)) throw new ServiceError('not_found', `Connection ${target.connectionId} was not found in this workspace.`);
        if (conn.mode !== 'live') throw invalid('connection', 'sandbox connections have no network sign-in to renew');
        [brandId, platform, connectionId] = [conn.brandId, conn.platformSlug as PlatformSlug, conn.id];
        identifier ??= conn.name;
      } else {
        if (!seesBrand(principal, target.brandId) || !(await findBrand(db, workspaceId, target.brandId))) throw brandNotFound(target.brandId);
        [brandId, platform] = [target.brandId, target.platform];
      }
      if (identifier === undefined) throw invalid('identifier', 'is required: the handle or e-mail of the account');
      const login = passwordLoginOrRefuse(platform);
      const signed = await login.signIn({ identifier, password: input.app_password, ...(input.service ? { service: input.service } : {}) });
      if (!signed.ok && signed.retryable) {
        // No answer, or a server failing on its side: nothing refused the password, so the address is what to check.
        const server = input.service ?? `${PLATFORMS[platform].name}'s sign-in server`;
        const path = input.service !== undefined ? 'service' : 'app_password';
        throw invalid(path, `could not reach ${server}: ${signed.message} Check the server address, or try again later.`);
      }
      if (!signed.ok) throw invalid('app_password', `${PLATFORMS[platform].name} refused the sign-in: ${signed.message}`);
      return keepConnection({ workspaceId, brandId, connectionId }, platform, signed.tokens, principal);
    },

    /**
     * The network's redirect back: checks `state` (single use, unexpired, same network), exchanges the code, and
     * creates the connection or reactivates the one being reconnected.
     * @throws ServiceError `validation_failed` (state unknown, replayed, expired, or the user refused),
     *   `limit_reached` (connections meter), `token_expired` mapped failures as `validation_failed`.
     */
    async callback(platform: PlatformSlug, params: { code?: string | undefined; state?: string | undefined; error?: string | undefined }): Promise<Connection> {
      const bad = (message: string) => new ServiceError('validation_failed', `state: ${message}`, { fields: [{ path: 'state', message }] });
      if (params.state === undefined) throw bad('is required');
      const now = clock.now();
      const row = await consumeNetworkState(db, params.state, now);
      if (row === undefined) throw bad('is unknown; start the connection again');
      if (row === 'used') throw bad('was already used; start the connection again');
      if (row === 'expired') throw bad('expired; start the connection again');
      if (row.platformSlug !== platform) throw bad(`belongs to ${row.platformSlug}, not ${platform}`);
      if (params.error !== undefined || params.code === undefined) {
        throw new ServiceError('validation_failed', 'code: the network did not authorize the connection (the user refused or the request was invalid)', { fields: [{ path: 'code', message: 'missing' }] });
      }
      const oauth = oauthOrRefuse(platform);
      const app = row.instanceOrigin === null ? undefined : await appOn(platform, oauth, row.instanceOrigin);
      const exchanged = await oauth.exchangeCode({ code: params.code, state: params.state, redirectUri: deps.redirectUriFor(platform), ...(app ? { app } : {}) });
      if (!exchanged.ok) {
        // A server that refuses our client (it was deleted there, or the server was reset) gets a new registration next time.
        if (app && exchanged.code === 'upstream_unknown' && !exchanged.retryable) await forgetInstanceApp(db, platform, app.origin, app.clientId);
        throw new ServiceError('validation_failed', `code: ${exchanged.message}`, { fields: [{ path: 'code', message: exchanged.code }] });
      }
      // The network's redirect carries no credential of ours: the person who started it is known only by the state.
      return keepConnection(row, platform, exchanged.tokens, { kind: 'system', workspaceId: row.workspaceId, label: `${PLATFORMS[platform].name} authorization` });
    },

    /**
     * Where a live connection can publish, on networks with several places per account (Pinterest's boards).
     * @throws ServiceError `not_found`, `platform_not_supported` (the network has no such places, or live
     *   connections to it are not configured here), `validation_failed` (a sandbox connection).
     */
    async targets(principal: Principal, workspaceId: string, connectionId: string): Promise<PublishTargetList> {
      const { conn, listTargets, tokens } = await targetable(principal, workspaceId, connectionId, 'connections.read');
      const listed = await listTargets(tokens);
      if (!listed.ok) throw invalid('connection', `${PLATFORMS[conn.platformSlug as PlatformSlug].name} did not list the places it can publish to: ${listed.message}`);
      return { data: listed.targets.map((t) => ({ id: t.id, name: t.name, current: t.id === tokens.accountId })) };
    },

    /**
     * Makes a live connection publish to another of its account's places (another Pinterest board): its tokens'
     * account and its name change; jobs already queued publish to the new place.
     * @throws ServiceError `not_found`, `platform_not_supported` (as `targets`), `validation_failed` (a sandbox
     *   connection, or not one of the places).
     */
    async chooseTarget(principal: Principal, workspaceId: string, connectionId: string, targetId: string): Promise<Connection> {
      const { conn, retarget, tokens, sealed } = await targetable(principal, workspaceId, connectionId, 'connections.manage');
      const moved = await retarget(tokens, targetId);
      if (!moved.ok) throw invalid('target_id', moved.message);
      const now = clock.now();
      const stored = { sealed: sealTokens(moved.tokens), expiresAt: moved.tokens.expiresAt, accountId: moved.tokens.accountId };
      // Replaced only if a renewal did not store new tokens meanwhile; the caller then simply chooses again.
      const replaced = await db.transaction().execute(async (tx) => {
        if (!(await replaceConnectionTokens(tx, conn.id, sealed, stored, now))) return false;
        await renameConnection(tx, conn.id, moved.tokens.accountName, now);
        await recordAudit(tx, principal, 'connection.target_changed', connectionTarget({ ...conn, name: moved.tokens.accountName }), now, { from: conn.name });
        return true;
      });
      if (!replaced) throw invalid('target_id', 'the connection was renewed at the same moment; choose the place again');
      return renderConnection({ ...conn, name: moved.tokens.accountName, updatedAt: now });
    },

    /** The decrypted tokens of a live connection, or null. */
    async tokensOf(connectionId: string): Promise<NetworkTokens | null> {
      const row = await findConnectionTokens(db, connectionId);
      return row?.sealed ? openTokens(row.sealed) : null;
    },

    /**
     * The account and token a live connection publishes with, refreshed first when the token expires within
     * `REFRESH_BEFORE_PUBLISH_MS` (rather than failing the publish with `token_expired`). Null when the connection
     * has no tokens, or its refresh failed for good (it is then expired, see `refresh`).
     */
    async credentialsFor(connectionId: string): Promise<LiveCredentials | null> {
      let tokens = await this.tokensOf(connectionId);
      if (tokens && refreshDue(tokens.expiresAt, clock.now(), REFRESH_BEFORE_PUBLISH_MS)) tokens = await this.refresh(connectionId);
      return tokens ? { accessToken: tokens.accessToken, accountId: tokens.accountId } : null;
    },

    /**
     * Looks ahead at live tokens: renews those that expire within a day where the network can; for networks with
     * no refresh (LinkedIn's 60-day tokens) records `connection.expired` with reason `expiring_soon` once, within
     * `warnWithinMs` of the expiry, so the user reconnects in time.
     */
    async sweepExpiring(warnWithinMs: number): Promise<void> {
      const now = clock.now();
      for (const conn of await connectionsExpiringBefore(db, now + Math.max(warnWithinMs, REFRESH_AHEAD_MS))) {
        const tokens = await findConnectionTokens(db, conn.id);
        if (!tokens?.expiresAt) continue;
        const refresher = refresherOf(conn.platformSlug as PlatformSlug);
        if (refresher) {
          if (!refresher.onUse && refreshDue(tokens.expiresAt, now, REFRESH_AHEAD_MS)) await this.refresh(conn.id);
          continue;
        }
        if (tokens.expiresAt - now < warnWithinMs) {
          await db.transaction().execute(async (tx) => {
            if (await markExpiryWarned(tx, conn.id, now)) {
              await recordConnectionExpired(tx, { workspaceId: conn.workspaceId, connectionId: conn.id, brandId: conn.brandId, platformSlug: conn.platformSlug, reason: 'expiring_soon', now });
            }
          });
        }
      }
    },

    /**
     * Renews a connection's tokens when the network can; a failed refresh expires the connection and records
     * `connection.expired` once. Returns the tokens to use, or null when the connection is now expired.
     */
    async refresh(connectionId: string): Promise<NetworkTokens | null> {
      const conn = await findConnectionById(db, connectionId);
      const before = await findConnectionTokens(db, connectionId);
      if (!conn || !before?.sealed) return null;
      const tokens = openTokens(before.sealed);
      const refresher = refresherOf(conn.platformSlug as PlatformSlug);
      if (!refresher) return tokens;
      // One renewal at a time: the other caller waits for its result instead of spending the same refresh token.
      if (!(await claimTokenRefresh(db, conn.id, clock.now(), REFRESH_LEASE_MS))) return awaitOtherRenewal(conn.id, before.sealed);
      try {
        const renewed = await refresher.refresh(tokens);
        const now = clock.now();
        if (renewed.ok) {
          const stored = { sealed: sealTokens(renewed.tokens), expiresAt: renewed.tokens.expiresAt, accountId: renewed.tokens.accountId };
          if (await replaceConnectionTokens(db, conn.id, before.sealed, stored, now)) return renewed.tokens;
          // Another renewal stored first (its lease had lapsed): use its tokens, so both callers hold the same ones.
          return this.tokensOf(conn.id);
        }
        // A renewal that outlived its lease may have rotated the refresh token we sent: its tokens are good.
        const after = await findConnectionTokens(db, conn.id);
        if (after?.sealed && after.sealed !== before.sealed) return openTokens(after.sealed);
        if (renewed.retryable) return tokens;
        await db.transaction().execute(async (tx) => {
          if (await transitionConnection(tx, conn.id, ['active'], 'expired', 'refresh_failed', now)) {
            await recordConnectionExpired(tx, { workspaceId: conn.workspaceId, connectionId: conn.id, brandId: conn.brandId, platformSlug: conn.platformSlug, reason: 'refresh_failed', now });
          }
        });
        return null;
      } finally {
        await releaseTokenRefresh(db, conn.id);
      }
    },
  };
}
