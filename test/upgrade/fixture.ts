/** What make-fixture.ts and upgrade.test.ts agree on: the fixtures' clock, settings, and what was recorded. */

/**
 * The instant the fixtures were made at, by a manual clock; the upgrade test starts the service at that instant
 * too, so a scheduled content is still ahead and no retry has come due: what it reads is what was written.
 */
export const FIXTURE_NOW = Date.UTC(2026, 0, 15, 9);

/** Webhook receivers on this machine; the sandbox answers at once. SECRET_KEY is the test suites' one. */
export const FIXTURE_ENV = { ALLOW_LOCAL_URLS: 'true' };

export interface FixtureManifest {
  workspace_id: string;
  /** `revoked` was revoked before the dump: it must still answer 401. */
  keys: { first: string; rest: string; revoked: string };
  /** GET /contents/{id} as answered then, by role (published, partial, failed, scheduled, draft). */
  contents: Record<string, Record<string, unknown>>;
  /** GET /webhooks/{id} and its deliveries, by role (ok, down). */
  webhooks: Record<string, { endpoint: Record<string, unknown>; deliveries: Record<string, unknown>[] }>;
  /** GET /oauth-clients's data. */
  oauth_clients: Record<string, unknown>[];
  /** A public client made by dynamic registration (RFC 7591). */
  registered_client: { client_id: string; redirect_uri: string };
}
