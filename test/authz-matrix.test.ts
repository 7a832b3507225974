import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.js';
import {
  type Answer,
  type Call,
  challengeProblems,
  errorBodyProblems,
  Findings,
  finishTenant,
  freshIdempotencyKey,
  type Ids,
  leaks,
  missingId,
  missingIds,
  OBJECT_KEYS,
  type ObjectKey,
  OPEN_OPERATIONS,
  type Operation,
  oauthAccessToken,
  operationsOf,
  PATH_PARAMS,
  REQUESTS,
  refusalFingerprint,
  restCall,
  revokeAccessToken,
  seedTenant,
  send,
  type Tenant,
  TOOL_ARGS,
  toolCall,
  toolOutcome,
} from './support/matrix.js';
import { describeEachDb, startTestServer, type TestServer } from './support/server.js';
import { type Permission, type Role, ROLES, roleCan } from '../src/core/permissions/roles.js';
import { tools } from '../tools/index.js';

/**
 * OWASP API1 (object level), API2 (authentication) and API5 (function level) as one table: every protected
 * operation of the served /openapi.yaml and every MCP tool, against every kind of wrong credential and every
 * object of another workspace. Two workspaces hold one object of each kind: the attacker and the victim.
 * Every answer is checked against /openapi.yaml and searched for the victim's ids, secrets and names.
 */

type Code = 'invalid_api_key' | 'invalid_token';

/** A credential that must be refused; `expiring` ones belong to the server whose tokens live 2 s. */
interface BadCredential {
  label: string;
  authorization: string | undefined;
  error: Code;
  on: 'main' | 'expiring';
}

/** A foreign id that only filters (a list by brand) or only names a replay slot answers like an unknown one, without refusing. */
const FILTERS = new Set(['listConnections brandId', 'list_connections brandId']);

/** Answers that mean authorization refused the caller or did not find the object. */
const REFUSED = [401, 403, 404];

/**
 * What each REST operation needs, in order: a role without one of them is refused with `forbidden` naming the
 * first it lacks. Empty: every role may (the credential's own `/me`, the public catalogue, `tools/list`). The
 * matrix's content is published at once, yet creating it needs only `contents.draft`: a role without
 * `contents.publish` is not refused, its content waits as pending_approval for a person (test/rest/approvals.test.ts).
 */
const OPERATION_PERMISSIONS: Record<string, readonly Permission[]> = {
  createApiKey: ['api_keys.manage'],
  listApiKeys: ['api_keys.manage'],
  revokeApiKey: ['api_keys.manage'],
  uploadMedia: ['media.upload'],
  listMedia: ['media.read'],
  deleteMedia: ['media.delete'],
  getWalletPrice: ['wallet.read'],
  getWallet: ['wallet.read'],
  listWalletOffers: ['wallet.pay'],
  getUsage: ['wallet.read'],
  listDeliveries: ['webhooks.read'],
  getDelivery: ['webhooks.read'],
  redeliver: ['webhooks.manage'],
  getMe: [],
  createSandboxConnection: ['connections.manage'],
  listConnections: ['connections.read'],
  getConnection: ['connections.read'],
  deactivateConnection: ['connections.manage'],
  startOAuthConnection: ['connections.manage'],
  connectAppPassword: ['connections.manage'],
  reconnectAppPassword: ['connections.manage'],
  reconnectOAuthConnection: ['connections.manage'],
  listConnectionTargets: ['connections.read'],
  chooseConnectionTarget: ['connections.manage'],
  setBrandQueue: ['brands.manage'],
  getBrandQueue: ['brands.read'],
  listPlatforms: [],
  createBrand: ['brands.manage'],
  listBrands: ['brands.read'],
  getBrand: ['brands.read'],
  updateBrand: ['brands.manage'],
  deleteBrand: ['brands.manage'],
  createWebhook: ['webhooks.manage'],
  listWebhooks: ['webhooks.read'],
  getWebhook: ['webhooks.read'],
  updateWebhook: ['webhooks.manage'],
  deleteWebhook: ['webhooks.manage'],
  sendWebhookTestEvent: ['webhooks.manage'],
  verifyWebhookSignature: [],
  createOAuthClient: ['oauth_clients.manage'],
  listOAuthClients: ['oauth_clients.manage'],
  getOAuthClient: ['oauth_clients.manage'],
  updateOAuthClient: ['oauth_clients.manage'],
  deleteOAuthClient: ['oauth_clients.manage'],
  createContent: ['contents.draft'],
  listContents: ['contents.read'],
  getContent: ['contents.read'],
  updateContent: ['contents.draft'],
  cancelContent: ['contents.publish'],
  publishContentNow: ['contents.publish'],
  retryContent: ['contents.publish'],
  listMembers: ['members.read'],
  addMember: ['members.manage'],
  updateMember: ['members.manage'],
  removeMember: ['members.manage'],
  listInvitations: ['members.read'],
  createInvitation: ['members.manage'],
  revokeInvitation: ['members.manage'],
  listAuditLog: ['audit.read'],
  submitContent: ['contents.draft'],
  approveContent: ['contents.approve'],
  requestContentChanges: ['contents.approve'],
  listContentComments: ['contents.read'],
  addContentComment: ['contents.comment'],
  listPendingApprovals: ['contents.read'],
  getApprovalPolicy: ['workspace.read'],
  setApprovalPolicy: ['brands.manage'],
  mcp: [],
};

/** A tool needs its declared permission (`publish_content`: `contents.draft`; without publishing, it waits for approval). */
const TOOL_PERMISSIONS: Record<string, readonly Permission[]> = Object.fromEntries(tools.map((t) => [t.name, [t.permission]]));

/** The permission a role is refused for, or undefined when it may. */
function lacking(role: Role, needs: readonly Permission[]): Permission | undefined {
  return needs.find((p) => !roleCan(role, p));
}

function refusal(answer: Answer, status: number, codes: readonly string[]): string[] {
  if (answer.status !== status) return [`status ${answer.status}, expected ${status} ${codes.join('|')}: ${answer.text.slice(0, 300)}`];
  const error = (answer.json as { error?: unknown } | undefined)?.error;
  const problems = errorBodyProblems(answer.json, answer.headers.get('x-request-id'));
  if (!codes.includes(String(error))) problems.push(`error ${String(error)}, expected ${codes.join('|')}`);
  return problems;
}

function leakProblems(answer: Answer, secrets: readonly string[]): string[] {
  const found = leaks(answer, secrets);
  return found.length === 0 ? [] : [`answer shows the victim's ${found.join(', ')}: ${answer.text.slice(0, 300)}`];
}

/** The single-id substitutions (and all of them at once) that change a request: how it can name a foreign object. */
function foreignVariants<T>(build: (ids: Ids) => T, own: Ids, other: Ids): { names: ObjectKey[]; foreign: T; missing: T; foreignIds: Partial<Ids>; missingIds: Partial<Ids> }[] {
  const base = JSON.stringify(build(own));
  const used = OBJECT_KEYS.filter((key) => JSON.stringify(build({ ...own, [key]: other[key] })) !== base);
  // A fresh Idempotency-Key for every request that does not test the key itself, so no earlier answer is replayed.
  const fresh = (ids: Ids): Ids => ({ ...ids, idemKey: freshIdempotencyKey() });
  const pick = (ids: Ids, names: ObjectKey[]): Partial<Ids> => Object.fromEntries(names.map((n) => [n, ids[n]]));
  const out = used.map((key) => {
    const ghost = key === 'idemKey' ? freshIdempotencyKey() : missingId(other[key]);
    const foreignIds = { ...fresh(own), [key]: other[key] };
    const missing = { ...fresh(own), [key]: ghost };
    return { names: [key], foreign: build(foreignIds), missing: build(missing), foreignIds: pick(foreignIds, [key]), missingIds: pick(missing, [key]) };
  });
  // Every object at once. The victim's Idempotency-Key is tested alone above: once the attacker's workspace has
  // used it, a second use there is the attacker's own conflict, not the victim's.
  const objects = used.filter((key) => key !== 'idemKey');
  if (objects.length > 1) {
    const allForeign = fresh({ ...other, wsId: own.wsId });
    const allMissing = { ...missingIds(other), wsId: own.wsId };
    out.push({ names: objects, foreign: build(allForeign), missing: build(allMissing), foreignIds: pick(allForeign, objects), missingIds: pick(allMissing, objects) });
  }
  return out;
}

function inPath(op: Operation, names: readonly ObjectKey[]): boolean {
  return Object.entries(PATH_PARAMS).some(([param, key]) => op.path.includes(`{${param}}`) && (names as readonly string[]).includes(key));
}

describeEachDb(
  'authorization matrix (OWASP API1, API2, API5)',
  (server, kind) => {
    let operations: Operation[] = [];
    let documentProblems: string[] = [];
    let servedTools: string[] = [];
    let attacker: Tenant;
    let victim: Tenant;
    let attackerCredentials: { label: string; authorization: string }[] = [];
    let badCredentials: BadCredential[] = [];
    let expiring: TestServer | undefined;
    let expiringWsId = '';
    let victimClientId = '';

    /** The protected operations, those that delete or deactivate last (should a refusal fail, the data survives longer). */
    const protectedOps = () => {
      const destructive = (op: Operation) => op.method === 'DELETE' || op.operationId === 'deactivateConnection';
      const all = operations.filter((op) => !op.open);
      return [...all.filter((op) => !destructive(op)), ...all.filter(destructive)];
    };
    /** Every protected request for these ids: each REST operation, and on /mcp also every call of every tool. */
    const protectedCalls = (ids: Ids): Call[] =>
      protectedOps().flatMap((op) => [restCall(op, ids), ...(op.path === '/mcp' ? Object.entries(TOOL_ARGS).flatMap(([name, builders]) => builders.map((b, i) => toolCall(name, b(ids), i))) : [])]);
    const probe = (wsId: string): Call => ({ label: 'probe', method: 'GET', path: `/api/v1/workspaces/${wsId}/api-keys`, headers: {} });

    beforeAll(async () => {
      // The token that must expire is made first: its 2 s run out while the main server is seeded.
      expiring = await startTestServer(kind, { OAUTH_ACCESS_TOKEN_TTL: '2s' }, { workers: false });
      const shortLived = await expiring.workspace('expiring');
      expiringWsId = shortLived.workspace_id;
      const expiringToken = await oauthAccessToken(expiring, shortLived.api_key);
      const fresh = await send(expiring, probe(expiringWsId), `Bearer ${expiringToken.token}`);
      if (fresh.status !== 200) throw new Error(`the 2 s token did not work while fresh: ${fresh.status}`);

      const s = server();
      ({ operations, problems: documentProblems } = operationsOf(await (await fetch(`${s.url}/openapi.yaml`)).text()));
      attacker = await seedTenant(s, 'attacker');
      victim = await seedTenant(s, 'victim');
      // Publishing emits content.published; one dispatcher pass records a (failed, pending) delivery of each webhook.
      await s.settle();
      await s.container.dispatcher.drain();
      await finishTenant(s, attacker);
      await finishTenant(s, victim);

      const attackerToken = await oauthAccessToken(s, attacker.apiKey);
      attackerCredentials = [
        { label: "attacker's API key", authorization: `Bearer ${attacker.apiKey}` },
        { label: "attacker's OAuth token", authorization: `Bearer ${attackerToken.token}` },
      ];

      // The victim's credentials that stop working: each is shown to work first, so its 401 means revocation.
      const revoked = await oauthAccessToken(s, victim.apiKey);
      const approverAnswer = await send(s, { label: 'approver key', method: 'POST', path: `/api/v1/workspaces/${victim.ids.wsId}/api-keys`, headers: { 'content-type': 'application/json' }, body: '{"name":"approver"}' }, `Bearer ${victim.apiKey}`);
      const approver = approverAnswer.json as { id: string; api_key: string };
      const approved = await oauthAccessToken(s, approver.api_key);
      for (const token of [revoked.token, approved.token]) {
        const works = await send(s, probe(victim.ids.wsId), `Bearer ${token}`);
        if (works.status !== 200) throw new Error(`a victim token did not work before revocation: ${works.status}`);
      }
      if ((await revokeAccessToken(s, revoked.token, revoked.clientId)) !== 200) throw new Error('revocation endpoint refused');
      const revokeKey = await send(s, { label: 'revoke approver', method: 'DELETE', path: `/api/v1/workspaces/${victim.ids.wsId}/api-keys/${approver.id}`, headers: {} }, `Bearer ${victim.apiKey}`);
      if (revokeKey.status !== 204) throw new Error(`revoking the approver key: ${revokeKey.status}`);
      victimClientId = revoked.clientId;
      victim.secrets.push(approver.id, approver.api_key, revoked.token, revoked.clientId, approved.token, approved.clientId);

      const listed = await send(s, restCall(operations.find((o) => o.path === '/mcp')!, attacker.ids), `Bearer ${attacker.apiKey}`);
      servedTools = ((listed.json as { result: { tools: { name: string }[] } }).result.tools ?? []).map((t) => t.name).sort();

      badCredentials = [
        { label: 'no Authorization header', authorization: undefined, error: 'invalid_api_key', on: 'main' },
        { label: 'Bearer x', authorization: 'Bearer x', error: 'invalid_api_key', on: 'main' },
        { label: "Basic with the victim's valid key", authorization: `Basic ${Buffer.from(`${victim.ids.wsId}:${victim.apiKey}`).toString('base64')}`, error: 'invalid_api_key', on: 'main' },
        { label: "the victim's valid key without a scheme", authorization: victim.apiKey, error: 'invalid_api_key', on: 'main' },
        { label: "the victim's valid key, truncated", authorization: `Bearer ${victim.apiKey.slice(0, -1)}`, error: 'invalid_api_key', on: 'main' },
        { label: 'an unknown svc_live_ key', authorization: `Bearer svc_live_${randomBytes(16).toString('hex')}`, error: 'invalid_api_key', on: 'main' },
        { label: "the victim's revoked key", authorization: `Bearer ${approver.api_key}`, error: 'invalid_api_key', on: 'main' },
        { label: 'an unknown OAuth-shaped token', authorization: `Bearer ${randomBytes(32).toString('base64url')}`, error: 'invalid_token', on: 'main' },
        { label: 'an OAuth token revoked at /revoke', authorization: `Bearer ${revoked.token}`, error: 'invalid_token', on: 'main' },
        { label: 'an OAuth token whose approving key was revoked', authorization: `Bearer ${approved.token}`, error: 'invalid_token', on: 'main' },
        { label: 'an expired OAuth token', authorization: `Bearer ${expiringToken.token}`, error: 'invalid_token', on: 'expiring' },
      ];

      for (let waited = 0; (await send(expiring, probe(expiringWsId), `Bearer ${expiringToken.token}`)).status !== 401; waited += 200) {
        if (waited > 10_000) throw new Error('the 2 s token never expired');
        await new Promise((r) => setTimeout(r, 200));
      }
    });

    afterAll(async () => {
      await expiring?.stop();
    });

    it('every operation declares its security, and exactly the expected ones are open', () => {
      expect(documentProblems).toEqual([]);
      expect(operations.filter((op) => op.open).map((op) => op.key).sort()).toEqual(OPEN_OPERATIONS);
      // Only /mcp and /api/v1/me are protected without a workspace in their path: they act on the credential's own.
      expect(protectedOps().filter((op) => !op.path.includes('{wsId}')).map((op) => op.key).sort()).toEqual(['GET /api/v1/me', 'POST /mcp']);
    });

    it('the matrix has a request for every protected operation and every served MCP tool', () => {
      const needsEntry = protectedOps().filter((op) => op.hasRequestBody || op.requiredQuery.length > 0 || op.path === '/mcp');
      expect(needsEntry.filter((op) => REQUESTS[op.operationId] === undefined).map((op) => op.key)).toEqual([]);
      expect(Object.keys(REQUESTS).filter((id) => !operations.some((op) => op.operationId === id))).toEqual([]);
      const params = protectedOps().flatMap((op) => [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!));
      expect(params.filter((p) => PATH_PARAMS[p] === undefined)).toEqual([]);
      expect(servedTools).toEqual(Object.keys(TOOL_ARGS).sort());
    });

    it('401: no, malformed, unknown, revoked and expired credentials are refused on every protected operation and tool, with a WWW-Authenticate challenge', async () => {
      const findings = new Findings();
      for (const credential of badCredentials) {
        const target = credential.on === 'expiring' ? expiring! : server();
        const ids = credential.on === 'expiring' ? { ...victim.ids, wsId: expiringWsId } : victim.ids;
        for (const call of protectedCalls(ids)) {
          const answer = await send(target, call, credential.authorization);
          // REST and /mcp alike answer every 401 with the shared Bearer challenge; REST names its realm too.
          const base = target.service.baseUrl;
          const resourceMetadataUrl = `${base}/.well-known/oauth-protected-resource/mcp`;
          findings.record(`${credential.label} → ${call.label}`, [
            ...answer.conformance,
            ...refusal(answer, 401, [credential.error]),
            ...challengeProblems(answer, credential.authorization, call.path === '/mcp' ? { resourceMetadataUrl } : { resourceMetadataUrl, realm: base }),
            ...leakProblems(answer, victim.secrets),
          ]);
        }
      }
      expect(findings.failures).toEqual([]);
      expect(findings.cases).toBe(badCredentials.length * protectedCalls(victim.ids).length);
    });

    it("403: another workspace's valid credential is refused on every workspace path, exactly as on a workspace that does not exist", async () => {
      const findings = new Findings();
      const ghost = missingId(victim.ids.wsId);
      for (const credential of attackerCredentials) {
        for (const op of protectedOps().filter((o) => o.path.includes('{wsId}'))) {
          const onVictim = await send(server(), restCall(op, victim.ids), credential.authorization);
          const onGhost = await send(server(), restCall(op, { ...victim.ids, wsId: ghost }), credential.authorization);
          const same = refusalFingerprint(onVictim.status, onVictim.json, { wsId: victim.ids.wsId }) === refusalFingerprint(onGhost.status, onGhost.json, { wsId: ghost });
          findings.record(`${credential.label} → ${op.key} of the victim`, [
            ...onVictim.conformance,
            ...onGhost.conformance,
            ...refusal(onVictim, 403, ['forbidden']),
            ...(same ? [] : [`differs from a nonexistent workspace: ${onVictim.text} vs ${onGhost.text}`]),
            ...leakProblems(onVictim, victim.secrets),
          ]);
        }
      }
      expect(findings.failures).toEqual([]);
      expect(findings.cases).toBe(2 * protectedOps().filter((o) => o.path.includes('{wsId}')).length);
    });

    it("404: on its own workspace path, naming the victim's objects answers as for ids that do not exist (REST)", async () => {
      const findings = new Findings();
      const named = new Set<string>();
      for (const credential of attackerCredentials) {
        for (const op of protectedOps().filter((o) => o.path !== '/mcp')) {
          for (const v of foreignVariants((ids) => restCall(op, ids), attacker.ids, victim.ids)) {
            if (inPath(op, v.names)) named.add(op.key);
            const foreign = await send(server(), v.foreign, credential.authorization);
            const missing = await send(server(), v.missing, credential.authorization);
            const filter = v.names.every((n) => n === 'idemKey' || FILTERS.has(`${op.operationId} ${n}`));
            const expected = inPath(op, v.names) ? refusal(foreign, 404, ['not_found']) : filter ? [] : refusal(foreign, foreign.status === 404 ? 404 : 400, ['not_found', 'validation_failed']);
            const same = refusalFingerprint(foreign.status, foreign.json, v.foreignIds) === refusalFingerprint(missing.status, missing.json, v.missingIds);
            findings.record(`${credential.label} → ${op.key} naming the victim's ${v.names.join('+')}`, [
              ...foreign.conformance,
              ...missing.conformance,
              ...expected,
              ...(same ? [] : [`differs from a nonexistent id: ${foreign.status} ${foreign.text.slice(0, 200)} vs ${missing.status} ${missing.text.slice(0, 200)}`]),
              ...leakProblems(foreign, victim.secrets),
            ]);
          }
        }
      }
      expect(findings.failures).toEqual([]);
      // Every operation with an object in its path was run with the victim's object there.
      const withObject = protectedOps().filter((op) => /\{(?!wsId\})\w+\}/.test(op.path));
      expect(withObject.filter((op) => !named.has(op.key)).map((op) => op.key)).toEqual([]);
    });

    it("the revocation endpoint revokes only the presenting client's tokens", async () => {
      // RFC 7009 answers 200 either way; the attacker's token must still work after the victim's client asked.
      const attackerToken = attackerCredentials[1]!.authorization.slice('Bearer '.length);
      expect(await revokeAccessToken(server(), attackerToken, victimClientId)).toBe(200);
      expect((await send(server(), probe(attacker.ids.wsId), attackerCredentials[1]!.authorization)).status).toBe(200);
    });

    it("MCP tools called with the attacker's credential and the victim's objects answer as for ids that do not exist", async () => {
      const findings = new Findings();
      for (const credential of attackerCredentials) {
        for (const [name, builders] of Object.entries(TOOL_ARGS)) {
          for (const [i, args] of builders.entries()) {
            for (const v of foreignVariants((ids) => toolCall(name, args(ids), i), attacker.ids, victim.ids)) {
              const foreign = await send(server(), v.foreign, credential.authorization);
              const missing = await send(server(), v.missing, credential.authorization);
              const [f, m] = [toolOutcome(foreign), toolOutcome(missing)];
              const filter = v.names.every((n) => n === 'idemKey' || FILTERS.has(`${name} ${n}`));
              const code = (f.body as { error?: unknown } | undefined)?.error;
              const expected = filter
                ? []
                : !f.isError || !['not_found', 'validation_failed'].includes(String(code))
                  ? [`not refused: ${foreign.text.slice(0, 300)}`]
                  : errorBodyProblems(f.body, foreign.headers.get('x-request-id'));
              const same = `${f.isError} ${refusalFingerprint(f.status, f.body, v.foreignIds)}` === `${m.isError} ${refusalFingerprint(m.status, m.body, v.missingIds)}`;
              findings.record(`${credential.label} → ${v.foreign.label} naming the victim's ${v.names.join('+')}`, [
                ...foreign.conformance,
                ...(foreign.status === 200 ? [] : [`HTTP ${foreign.status}`]),
                ...expected,
                ...(same ? [] : [`differs from a nonexistent id: ${foreign.text.slice(0, 200)} vs ${missing.text.slice(0, 200)}`]),
                ...leakProblems(foreign, victim.secrets),
              ]);
            }
          }
        }
      }
      expect(findings.failures).toEqual([]);
      expect(findings.cases).toBeGreaterThan(2 * 10);
    });

    it("control, MCP: every tool called with the attacker's own objects passes authorization and shows nothing of the victim", async () => {
      const findings = new Findings();
      for (const [name, builders] of Object.entries(TOOL_ARGS)) {
        for (const [i, args] of builders.entries()) {
          const answer = await send(server(), toolCall(name, args(attacker.ids), i), attackerCredentials[0]!.authorization);
          const outcome = toolOutcome(answer);
          const code = String((outcome.body as { error?: unknown } | undefined)?.error);
          findings.record(`own → ${answer.status} MCP ${name}#${i + 1}`, [
            ...answer.conformance,
            ...(answer.status === 200 ? [] : [`HTTP ${answer.status}`]),
            ...(outcome.isError && ['not_found', 'forbidden', 'invalid_api_key', 'invalid_token', 'server_error'].includes(code) ? [`refused: ${answer.text.slice(0, 300)}`] : []),
            ...leakProblems(answer, victim.secrets),
          ]);
        }
      }
      expect(findings.failures).toEqual([]);
    });

    it('roles: every REST operation and MCP tool, called with a key of each role, is allowed or refused with 403 naming the permission, as the role matrix says', async () => {
      const s = server();
      const tenant = await seedTenant(s, 'roles');
      await s.settle();
      await s.container.dispatcher.drain();
      await finishTenant(s, tenant);
      const keys = new Map<Role, string>([['owner', tenant.apiKey]]);
      for (const role of ROLES.filter((r) => r !== 'owner')) {
        const made = await send(s, { label: `make ${role} key`, method: 'POST', path: `/api/v1/workspaces/${tenant.ids.wsId}/api-keys`, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: `${role} key`, role }) }, `Bearer ${tenant.apiKey}`);
        if (made.status !== 201) throw new Error(`making a ${role} key: ${made.status} ${made.text}`);
        keys.set(role, (made.json as { api_key: string }).api_key);
      }
      expect(protectedOps().filter((op) => OPERATION_PERMISSIONS[op.operationId] === undefined).map((op) => op.key)).toEqual([]);
      const findings = new Findings();
      const outcome = (label: string, refused: boolean, forbidden: boolean, permission: unknown, missing: Permission | undefined, text: string) =>
        findings.record(
          label,
          missing === undefined
            ? forbidden || refused
              ? [`refused: ${text.slice(0, 300)}`]
              : []
            : forbidden && permission === missing
              ? []
              : [`expected 403 forbidden naming ${missing}: ${text.slice(0, 300)}`],
        );
      // The refused roles first: an allowed role's delete must not turn another role's refusal into a 404.
      const byRefusal = (needs: readonly Permission[]) => [...ROLES].sort((a, b) => Number(lacking(b, needs) !== undefined) - Number(lacking(a, needs) !== undefined));
      for (const op of protectedOps()) {
        const needs = OPERATION_PERMISSIONS[op.operationId]!;
        for (const role of byRefusal(needs)) {
          const answer = await send(s, restCall(op, { ...tenant.ids, idemKey: freshIdempotencyKey() }), `Bearer ${keys.get(role)!}`);
          const body = answer.json as { error?: unknown; permission?: unknown } | undefined;
          findings.record(`${role} → ${op.key} conformance`, answer.conformance);
          outcome(`${role} → ${op.key}`, answer.status === 401 || answer.status >= 500, answer.status === 403 && body?.error === 'forbidden', body?.permission, lacking(role, needs), `${answer.status} ${answer.text}`);
        }
      }
      for (const [name, builders] of Object.entries(TOOL_ARGS)) {
        const needs = TOOL_PERMISSIONS[name]!;
        for (const role of byRefusal(needs)) {
          for (const [i, args] of builders.entries()) {
            const answer = await send(s, toolCall(name, args({ ...tenant.ids, idemKey: freshIdempotencyKey() }), i), `Bearer ${keys.get(role)!}`);
            const { isError, body } = toolOutcome(answer);
            const error = (body as { error?: unknown } | undefined)?.error;
            outcome(`${role} → MCP ${name}#${i + 1}`, answer.status !== 200 || (isError && ['invalid_api_key', 'invalid_token', 'server_error'].includes(String(error))), isError && error === 'forbidden', (body as { permission?: unknown } | undefined)?.permission, lacking(role, needs), answer.text);
          }
        }
      }
      expect(findings.failures).toEqual([]);
      expect(findings.cases).toBeGreaterThan(ROLES.length * 80);
    });

    it("control, REST: every operation on the attacker's own path and objects passes authorization and shows nothing of the victim (destructive last)", async () => {
      const findings = new Findings();
      for (const op of protectedOps()) {
        const answer = await send(server(), restCall(op, attacker.ids), attackerCredentials[0]!.authorization);
        findings.record(`own → ${op.key}`, [
          ...answer.conformance,
          ...(REFUSED.includes(answer.status) || answer.status >= 500 ? [`refused: ${answer.status} ${answer.text.slice(0, 300)}`] : []),
          ...leakProblems(answer, victim.secrets),
        ]);
      }
      expect(findings.failures).toEqual([]);
    });
  },
  // Many requests per workspace in a few seconds: the per-workspace rate limit is not what this suite tests.
  { ALLOW_LOCAL_URLS: 'true', RATE_LIMIT_PER_MINUTE: '100000' },
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
