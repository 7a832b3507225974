import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizationServerMetadata } from '../../oauth/metadata.js';
import { issuerOf, mcpResourceOf } from '../../oauth/provider.js';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { type BearerProxy, startBearerProxy } from '../conformance/bearer-proxy.js';
import { type Era, keyOf, type ListedScenario, type NotApplicable, type Outcome, readKnownFailures, readNotApplicable } from '../conformance/scenario-lists.js';
import { type Check, type CheckStatus, ensureConformanceSuite, listServerScenarios, runConformance, type ScenarioResult, type SuiteRun } from '../conformance/suite.js';
import { testDatabaseKinds } from '../support/databases.js';
import { Browser } from '../support/oauth-browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * MCP conformance: the official suite, `@modelcontextprotocol/conformance` (pinned in
 * test/conformance/package.json), against the real server.
 *
 * What runs
 * - Every server scenario on each wire era: `server --suite all --spec-version 2025-11-25` (stateful: initialize
 *   handshake) and `--spec-version 2026-07-28` (stateless: `_meta` on every request), then the extension
 *   scenarios, which belong to neither era (`--suite all` unpinned; the runner gives them the 2026-07-28 wire).
 *   The suite talks to /mcp through a local proxy that adds the bearer key (test/conformance/bearer-proxy.ts).
 * - Both authorization-server scenarios against the embedded OAuth server, once per era: metadata discovery, and
 *   the authorization-code grant with PKCE. The grant needs a client whose redirect URI is the suite's callback
 *   server (`--client-id`; here a public client registered by DCR, no secret) and a user: the suite prints the
 *   authorization URL and waits up to 5 minutes for the callback, so this test plays the user (signs in with
 *   the workspace's API key, consents) and the browser lands on the suite's callback server.
 * - The suite needs Node >= 22 (fs.globSync); the service runs on Node 20. The suite and the `node@22` package
 *   live in test/conformance/ (their own package.json and lockfile, so their `node` bin never shadows the
 *   project's); this file installs them with `npm ci` when missing or installed from another lockfile.
 *
 * What is asserted, per era
 * - The outcome of every scenario the suite ran: each one in PASSING passes (a check succeeded, none failed);
 *   each one in test/conformance/not-applicable.txt, with the reason it does not apply to this server, has the
 *   outcome written there. A regression, a newly passing (newly applicable) scenario and a scenario new to the
 *   suite all change this map.
 * - Every check of an applicable scenario: none fails, except single checks listed as not applicable and the
 *   server's known bugs in test/conformance/known-failures.txt, which must still fail (a fix fails the test
 *   until its line is removed).
 * - The suite's `wire-schema-valid` check, in every scenario, applicable or not: every JSON-RPC message the
 *   server sent is valid for the negotiated protocol version.
 * WARNING checks (SHOULDs) do not fail the test; they are printed.
 *
 * Cost: one SQLite database only (the suite exercises the MCP and OAuth doors, whose storage paths the rest of
 * test/mcp and test/oauth cover on both databases): about 10 s, plus about 20 s for the first install.
 */

/** The scenarios that must pass on each era; every other scenario the suite runs is in not-applicable.txt. */
const PASSING: Record<Era, string[]> = {
  '2025-11-25': ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'],
  '2026-07-28': [
    'server-stateless',
    'tools-list',
    'server-sse-multiple-streams',
    'dns-rebinding-protection',
    'caching',
    'http-header-validation',
    'input-required-result-unsupported-methods',
  ],
  extension: [],
};

const AUTHORIZATION_PASSING = ['authorization-server-metadata-endpoint', 'authorization-code-grant'];

/** The suite's own checks on every message (schema validity), not one of the scenario's. */
function isWireCheck(check: Check): boolean {
  return check.id.startsWith('wire-schema-');
}

function outcomeOf(statuses: CheckStatus[]): Outcome {
  if (statuses.includes('FAILURE')) return 'fails';
  return statuses.includes('SUCCESS') ? 'passes' : 'skips';
}

interface Lists {
  notApplicable: NotApplicable[];
  knownFailures: ListedScenario[];
}

interface EraReport {
  /** scenario → outcome, and `scenario:check` → outcome for checks listed on their own. */
  outcomes: Record<string, Outcome>;
  /** Failing checks of applicable scenarios (known failures aside), with the suite's message. */
  failing: string[];
  /** Messages the server sent that the protocol schema refuses. */
  invalidWire: string[];
  warnings: string[];
}

function report(results: ScenarioResult[], era: Era, lists: Lists): EraReport {
  const listed: ListedScenario[] = [...lists.notApplicable, ...lists.knownFailures].filter((entry) => entry.eras.includes(era));
  const knownScenarios = new Set(lists.knownFailures.filter((e) => e.eras.includes(era) && e.check === undefined).map((e) => e.scenario));
  const applicable = new Set(PASSING[era]);
  const outcomes: Record<string, Outcome> = {};
  const failing: string[] = [];
  const invalidWire: string[] = [];
  const warnings: string[] = [];
  for (const { scenario, checks } of results) {
    const singled = new Set(listed.filter((entry) => entry.scenario === scenario && entry.check !== undefined).map((entry) => entry.check));
    const own = checks.filter((check) => !isWireCheck(check));
    outcomes[scenario] = outcomeOf(own.filter((check) => !singled.has(check.id)).map((check) => check.status));
    for (const id of singled) outcomes[`${scenario}:${id}`] = outcomeOf(own.filter((check) => check.id === id).map((check) => check.status));
    for (const check of checks) {
      const line = `${scenario}:${check.id} ${check.errorMessage ?? ''}`.trim();
      if (check.id === 'wire-schema-valid' && check.status === 'FAILURE') invalidWire.push(`${line} ${JSON.stringify(check.details ?? {})}`);
      if (!applicable.has(scenario) || singled.has(check.id)) continue;
      if (check.status === 'FAILURE' && !knownScenarios.has(scenario)) failing.push(line);
      if (check.status === 'WARNING') warnings.push(line);
    }
  }
  return { outcomes, failing, invalidWire, warnings };
}

/** PASSING passes, known failures fail, and what does not apply does what not-applicable.txt says. */
function expectedOutcomes(era: Era, lists: Lists): Record<string, Outcome> {
  const expected: Record<string, Outcome> = Object.fromEntries(PASSING[era].map((scenario) => [scenario, 'passes' as const]));
  for (const entry of lists.notApplicable.filter((e) => e.eras.includes(era))) expected[keyOf(entry)] = entry.outcome;
  for (const entry of lists.knownFailures.filter((e) => e.eras.includes(era))) expected[keyOf(entry)] = 'fails';
  return expected;
}

/** The run printed how many scenarios it selected; each one must have reported. */
function expectComplete(run: SuiteRun): void {
  const selected = /^Running .* \((\d+) scenarios\)/m.exec(run.stdout)?.[1];
  expect(selected, `the suite did not start:\n${run.stdout}\n${run.stderr}`).toBeDefined();
  expect(run.scenarios).toHaveLength(Number(selected));
}

/** A free loopback port whose URL does not begin with `avoid` (the browser helper tells origins apart by prefix). */
async function freePort(avoid: string): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const probe = createServer();
      probe.once('error', reject);
      probe.listen(0, '127.0.0.1', () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
      });
    });
    if (!`http://127.0.0.1:${port}`.startsWith(avoid)) return port;
  }
}

describe('MCP conformance suite (@modelcontextprotocol/conformance) [sqlite]', () => {
  const sqlite = testDatabaseKinds().find((kind) => kind.name === 'sqlite')!;
  const lists: Lists = { notApplicable: readNotApplicable(), knownFailures: readKnownFailures() };
  /** Every server scenario the installed suite knows, with its era tags. */
  let listed: Map<string, string[]>;
  let server: TestServer;
  let ws: NewWorkspace;
  let proxy: BearerProxy;
  let outputDir: string;

  beforeAll(async () => {
    await ensureConformanceSuite();
    listed = await listServerScenarios();
    // The suite sends a few hundred requests in seconds; the workspace rate limit is tested elsewhere.
    server = await startTestServer(sqlite, { RATE_LIMIT_PER_MINUTE: '100000' }, { workers: false });
    ws = await server.workspace('Conformance');
    proxy = await startBearerProxy(server.url, ws.api_key);
    outputDir = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
  }, 240_000);

  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
    if (outputDir !== undefined) rmSync(outputDir, { recursive: true, force: true });
  });

  async function runServerSuite(era: Era): Promise<ScenarioResult[]> {
    const pin = era === 'extension' ? [] : ['--spec-version', era];
    const run = await runConformance(['server', '--url', `${proxy.url}/mcp`, '--suite', 'all', ...pin, '-o', join(outputDir, `server-${era}`)], {
      signal: AbortSignal.timeout(60_000),
    });
    expectComplete(run);
    if (era !== 'extension') return run.scenarios;
    return run.scenarios.filter(({ scenario }) => listed.get(scenario)?.includes('extension'));
  }

  function expectEra(era: Era, results: ScenarioResult[]): void {
    const { outcomes, failing, invalidWire, warnings } = report(results, era, lists);
    if (warnings.length > 0) console.info(`MCP conformance ${era}, warnings (SHOULDs):\n  ${warnings.join('\n  ')}`);
    expect(failing, `failing checks of applicable scenarios (${era})`).toEqual([]);
    expect(invalidWire, `server messages the ${era} schema refuses`).toEqual([]);
    expect(outcomes, `scenario outcomes (${era}): PASSING above, test/conformance/not-applicable.txt and known-failures.txt`).toEqual(
      expectedOutcomes(era, lists),
    );
  }

  it('every server scenario the suite lists is classified for each era it runs on, and only those', () => {
    for (const era of ['2025-11-25', '2026-07-28', 'extension'] as const) {
      const runsOn = [...listed].filter(([, tags]) => tags.includes(era)).map(([name]) => name);
      const classified = [...PASSING[era], ...lists.notApplicable.filter((e) => e.eras.includes(era) && e.check === undefined).map((e) => e.scenario)];
      expect(classified.sort(), `scenarios of ${era}: PASSING and not-applicable.txt`).toEqual(runsOn.sort());
      // A known failure is a bug in an applicable scenario, never a way to classify one.
      const known = lists.knownFailures.filter((e) => e.eras.includes(era)).map((e) => e.scenario);
      expect(known.filter((scenario) => !PASSING[era].includes(scenario)), `known failures outside PASSING (${era})`).toEqual([]);
    }
  });

  it('2025-11-25 (stateful wire): every applicable server scenario passes', async () => {
    expectEra('2025-11-25', await runServerSuite('2025-11-25'));
    expect(proxy.forwarded).toBeGreaterThan(0);
  }, 90_000);

  it('2026-07-28 (stateless wire): every applicable server scenario passes', async () => {
    expectEra('2026-07-28', await runServerSuite('2026-07-28'));
  }, 90_000);

  it('extension scenarios: none applies (no extension is declared), and the server answers them validly', async () => {
    expectEra('extension', await runServerSuite('extension'));
  }, 90_000);

  /**
   * The authorization-server scenarios for one era, with a client registered by DCR for the suite's callback. The
   * suite prints the authorization URL for a user to open; this user signs in with the workspace's API key and
   * consents, and the final redirect is delivered to the suite's callback server.
   */
  async function runAuthorizationSuite(era: Era): Promise<SuiteRun> {
    const base = server.service.baseUrl;
    const issuer = issuerOf(base);
    const port = await freePort(base);
    const registration = await fetch(String(authorizationServerMetadata(issuer).registration_endpoint), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'MCP conformance suite', redirect_uris: [`http://127.0.0.1:${port}/callback`], token_endpoint_auth_method: 'none' }),
    });
    expect(registration.status).toBe(201);
    const { client_id: clientId } = (await registration.json()) as { client_id: string };

    // Without a callback the suite would wait five minutes; a failed consent ends it at once.
    const abort = new AbortController();
    const timeout = setTimeout(() => abort.abort(), 60_000);
    let consent: Promise<void> | undefined;
    let consentFailed: unknown;
    const userOpens = (url: string): void => {
      consent = (async () => {
        const callback = await new Browser().authorize(url, base, ws.api_key);
        expect(callback.origin).toBe(`http://127.0.0.1:${port}`);
        await fetch(callback);
      })().catch((err: unknown) => {
        consentFailed = err;
        abort.abort();
      });
    };
    const args = ['authorization', '--url', issuer, '--client-id', clientId, '--resource', mcpResourceOf(base), '--port', String(port)];
    const run = await runConformance([...args, '--spec-version', era, '-o', join(outputDir, `authorization-${era}`)], {
      signal: abort.signal,
      onLine: (line) => {
        if (URL.canParse(line) && new URL(line).searchParams.get('client_id') === clientId) userOpens(line);
      },
    }).finally(() => clearTimeout(timeout));
    expect(consent, `the suite never printed an authorization URL:\n${run.stdout}\n${run.stderr}`).toBeDefined();
    await consent;
    if (consentFailed !== undefined) throw consentFailed;
    expectComplete(run);
    return run;
  }

  it('authorization server: metadata and the authorization-code grant with PKCE pass for each era', async () => {
    for (const era of ['2025-11-25', '2026-07-28'] as const) {
      const run = await runAuthorizationSuite(era);
      const all = run.scenarios.flatMap(({ scenario, checks }) => checks.map((check) => ({ line: `${scenario}:${check.id} ${check.errorMessage ?? ''}`.trim(), check })));
      const warnings = all.filter(({ check }) => check.status === 'WARNING').map(({ line }) => line);
      if (warnings.length > 0) console.info(`MCP conformance authorization ${era}, warnings (SHOULDs):\n  ${warnings.join('\n  ')}`);
      expect(all.filter(({ check }) => check.status === 'FAILURE').map(({ line }) => line), `failing authorization checks (${era})`).toEqual([]);
      const outcomes = Object.fromEntries(run.scenarios.map(({ scenario, checks }) => [scenario, outcomeOf(checks.map((c) => c.status))]));
      expect(outcomes).toEqual(Object.fromEntries(AUTHORIZATION_PASSING.map((scenario) => [scenario, 'passes'])));
      expect(run.code).toBe(0);
    }
  }, 90_000);
});
