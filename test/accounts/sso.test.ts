import type { Server } from 'node:http';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { newId, sha256Hex } from '../../src/core/ids.js';
import { testDatabaseKinds } from '../support/databases.js';
import { freePort } from '../support/person.js';
import { startTestServer, startTestServerOn, type TestServer } from '../support/server.js';

/**
 * Single sign-on against a throw-away OpenID provider started here: oidc-provider itself with one client and its
 * development login, where the login typed is the account and its verified email. The flow is driven with real
 * HTTP, cookies kept per host and redirects followed by hand, as a browser would.
 */

/** A browser's cookie jar and redirect following, enough for the authorization code flow. */
class Visitor {
  private readonly jar = new Map<string, Map<string, string>>();

  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const { host } = new URL(url);
    const cookies = [...(this.jar.get(host) ?? new Map<string, string>()).entries()].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: { ...(cookies ? { cookie: cookies } : {}), ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
    });
    const store = this.jar.get(host) ?? new Map<string, string>();
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at).trim();
      const value = pair!.slice(at + 1).trim();
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) store.delete(name);
      else store.set(name, value);
    }
    this.jar.set(host, store);
    return res;
  }

  cookie(url: string, name: string): string | undefined {
    return this.jar.get(new URL(url).host)?.get(name);
  }

  /**
   * Follows redirects from `url`, signing in at the provider's login form as `login` and confirming its consent
   * form, until an answer that is no redirect, or until the next address matches `stopAt` (returned unvisited).
   */
  async walk(url: string, login: string, stopAt?: (next: string) => boolean): Promise<{ url: string; res?: Response }> {
    let next = url;
    let init: { method?: string; form?: Record<string, string> } = {};
    for (let step = 0; step < 20; step++) {
      if (stopAt?.(next)) return { url: next };
      const res = await this.request(next, init);
      init = {};
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location !== null) {
        next = new URL(location, next).href;
        continue;
      }
      const body = await res.clone().text();
      const action = /<form[^>]*action="([^"]+)"/.exec(body)?.[1];
      if (res.status === 200 && action !== undefined && action.includes('/interaction/')) {
        next = new URL(action, next).href;
        // The development pages post back to themselves, naming their prompt: the login form, then the consent.
        init = { method: 'POST', form: body.includes('name="login"') ? { prompt: 'login', login, password: 'any' } : { prompt: 'consent' } };
        continue;
      }
      return { url: next, res };
    }
    throw new Error('too many redirects');
  }
}

for (const kind of testDatabaseKinds()) {
  describe(`single sign-on with an OpenID provider [${kind.name}]`, () => {
    let server: TestServer;
    let provider: Server;
    let base: string;
    let workspaceId: string;

    beforeAll(async () => {
      const [port, providerPort] = [await freePort(), await freePort()];
      base = `http://localhost:${port}`;
      const issuer = `http://localhost:${providerPort}`;
      const oidc = new Provider(issuer, {
        clients: [{ client_id: 'publisher', client_secret: 'publisher-secret-value', redirect_uris: [`${base}/dashboard/sso/callback`], response_types: ['code'], grant_types: ['authorization_code'] }],
        // The development login's "login" is the account; its email is the same, and verified.
        findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, email: id, email_verified: true }) }),
        claims: { openid: ['sub'], email: ['email', 'email_verified'] },
        cookies: { keys: ['a-test-cookie-key'] },
      });
      provider = oidc.listen(providerPort, '127.0.0.1');
      // The default workspace must exist before the service starts with it: a first start creates it.
      const first = await startTestServer(kind, { PORT: String(port), BASE_URL: base }, { workers: false });
      workspaceId = (await first.workspace('Agency')).workspace_id;
      await first.service.stop(1000);
      server = await startTestServerOn(first.database, {
        PORT: String(port),
        BASE_URL: base,
        SSO_ISSUER: issuer,
        SSO_CLIENT_ID: 'publisher',
        SSO_CLIENT_SECRET: 'publisher-secret-value',
        SSO_ALLOWED_DOMAINS: 'allowed.test',
        SSO_DEFAULT_WORKSPACE: workspaceId,
        SSO_NAME: 'Agency SSO',
      }, { workers: false });
    }, 90_000);

    afterAll(async () => {
      await server?.stop();
      await new Promise<void>((resolve) => (provider ? provider.close(() => resolve()) : resolve()));
    });

    const db = () => server.container.db.kysely;

    it('the sign-in page offers the provider; a person at an allowed domain joins the default workspace as viewer and lands on the dashboard', async () => {
      const visitor = new Visitor();
      const page = await (await visitor.request(`${base}/dashboard/sign-in`)).text();
      expect(page).toContain('Sign in with Agency SSO');

      const end = await visitor.walk(`${base}/dashboard/sso/start`, 'ana@allowed.test');
      expect(end.url).toBe(`${base}/dashboard`);
      expect(end.res!.status).toBe(200);
      expect(await end.res!.text()).toContain('Overview');

      const user = await db().selectFrom('users').select(['id', 'email']).where('email', '=', 'ana@allowed.test').executeTakeFirstOrThrow();
      const membership = await db().selectFrom('memberships').select(['workspace_id', 'role']).where('user_id', '=', user.id).execute();
      expect(membership).toEqual([{ workspace_id: workspaceId, role: 'viewer' }]);
      const link = await db().selectFrom('sso_identities').select(['subject', 'user_id']).execute();
      expect(link).toEqual([{ subject: 'ana@allowed.test', user_id: user.id }]);
      const session = await db().selectFrom('user_sessions').select('auth_method').where('user_id', '=', user.id).executeTakeFirstOrThrow();
      expect(session.auth_method).toBe('sso');
      const audit = await db().selectFrom('audit_events').select(['action', 'actor_id']).where('workspace_id', '=', workspaceId).orderBy('id').execute();
      // Both in the same millisecond: their order within it is not meaningful.
      expect(audit).toHaveLength(2);
      expect(audit).toEqual(expect.arrayContaining([
        { action: 'member.joined', actor_id: user.id },
        { action: 'auth.signed_in', actor_id: user.id },
      ]));

      // Signing in again finds the same person through the link, and adds nothing.
      const again = await new Visitor().walk(`${base}/dashboard/sso/start`, 'ana@allowed.test');
      expect(again.url).toBe(`${base}/dashboard`);
      expect(await db().selectFrom('users').select('id').execute()).toHaveLength(1);
    });

    it('a person at another domain is refused with a page that says why, and no account is made', async () => {
      const end = await new Visitor().walk(`${base}/dashboard/sso/start`, 'bob@elsewhere.test');
      expect(end.url.startsWith(`${base}/dashboard/sso/callback?`)).toBe(true);
      expect(end.res!.status).toBe(403);
      const text = await end.res!.text();
      expect(text).toContain('No access here yet');
      expect(text).toContain('bob@elsewhere.test is not a member of any workspace here');
      expect(await db().selectFrom('users').select('id').where('email', '=', 'bob@elsewhere.test').execute()).toEqual([]);
      expect(await db().selectFrom('sso_identities').select('subject').where('subject', '=', 'bob@elsewhere.test').execute()).toEqual([]);
    });

    it('an invited person at another domain joins with the invitation\'s role', async () => {
      const now = server.container.clock.now();
      await db()
        .insertInto('invitations')
        .values({ id: newId('inv_'), workspace_id: workspaceId, email: 'carla@elsewhere.test', role: 'contributor', brand_ids: null, token_digest: sha256Hex(newId('tok_')), created_by: null, created_at: now, expires_at: now + 86_400_000, accepted_at: null, accepted_by: null, revoked_at: null })
        .execute();
      const end = await new Visitor().walk(`${base}/dashboard/sso/start`, 'carla@elsewhere.test');
      expect(end.url).toBe(`${base}/dashboard`);
      const row = await db()
        .selectFrom('memberships as m')
        .innerJoin('users as u', 'u.id', 'm.user_id')
        .select(['m.role'])
        .where('u.email', '=', 'carla@elsewhere.test')
        .execute();
      expect(row).toEqual([{ role: 'contributor' }]);
      const invitation = await db().selectFrom('invitations').select('accepted_at').where('email', '=', 'carla@elsewhere.test').executeTakeFirstOrThrow();
      expect(invitation.accepted_at).not.toBeNull();
    });

    it('an answer whose state is not the one this browser started with is refused, and its sign-in cannot be finished after', async () => {
      const visitor = new Visitor();
      const { url: callback } = await visitor.walk(`${base}/dashboard/sso/start`, 'dora@allowed.test', (next) => next.startsWith(`${base}/dashboard/sso/callback`));
      const tampered = new URL(callback);
      tampered.searchParams.set('state', 'an-attackers-state');
      const refused = await visitor.request(tampered.href);
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain('does not belong to the sign-in this browser started');
      expect(visitor.cookie(base, 'svc_session')).toBeUndefined();
      // The stored request was used up by the refusal: the genuine answer, arriving late, is refused too.
      const late = await visitor.request(callback);
      expect(late.status).toBe(400);
      expect(await late.text()).toContain('too long');
      expect(await db().selectFrom('users').select('id').where('email', '=', 'dora@allowed.test').execute()).toEqual([]);
    });
  });
}

describe('single sign-on settings', () => {
  const base = { SSO_ISSUER: 'https://id.example.com', SSO_CLIENT_ID: 'publisher', SSO_CLIENT_SECRET: 'secret' };

  it('are off without SSO_ISSUER, and each variable that needs another names it', () => {
    expect(parseConfig({}).sso).toBeNull();
    expect(() => parseConfig({ SSO_CLIENT_ID: 'x' })).toThrow(/SSO_ISSUER is required with SSO_CLIENT_ID/);
    expect(() => parseConfig({ SSO_ISSUER: 'https://id.example.com' })).toThrow(/SSO_CLIENT_ID is required with SSO_ISSUER/);
    expect(() => parseConfig({ ...base, SSO_ALLOWED_DOMAINS: 'example.com' })).toThrow(/SSO_DEFAULT_WORKSPACE is required with SSO_ALLOWED_DOMAINS/);
    expect(() => parseConfig({ ...base, SSO_DEFAULT_ROLE: 'owner' })).toThrow(/SSO_DEFAULT_ROLE must be admin, editor, contributor, viewer or client/);
    expect(() => parseConfig({ ...base, SSO_ALLOWED_DOMAINS: 'not a domain' })).toThrow(/SSO_ALLOWED_DOMAINS must be a comma-separated list of domains/);
  });

  it('read domains lowercased, the role defaulting to viewer', () => {
    expect(parseConfig({ ...base, SSO_ALLOWED_DOMAINS: 'Example.com, example.org', SSO_DEFAULT_WORKSPACE: 'ws_abc' }).sso).toEqual({
      issuer: 'https://id.example.com',
      clientId: 'publisher',
      clientSecret: 'secret',
      allowedDomains: ['example.com', 'example.org'],
      defaultWorkspaceId: 'ws_abc',
      defaultRole: 'viewer',
      name: 'single sign-on',
    });
  });
});
