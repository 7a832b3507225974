import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig, parseDuration } from '../src/config.js';
import { DEFAULT_OFFERS, DEFAULT_PRICES } from '../src/core/wallet/prices.js';
import { startServiceProcess } from './support/process.js';
import { overrides, serviceEnv } from './support/overrides.js';

/** The ConfigError `parse` raises, or a failure when it accepts. */
function refusal(parse: () => unknown): ConfigError {
  try {
    parse();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('accepted');
}

describe('durations: one form, a whole number with its unit', () => {
  it.each([
    ['250ms', 250],
    ['30s', 30_000],
    ['10m', 600_000],
    ['2h', 7_200_000],
    ['7d', 604_800_000],
    ['0', 0],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['30', '1.5s', '10 minutes', 's', '-5s', '', '5w'])('%j is not a duration', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  it('every duration setting reads through it, and a number without a unit names the variable', () => {
    const c = parseConfig({ WEBHOOK_TIMEOUT: '45s', SCHEDULE_GRACE: '2h', DASHBOARD_SESSION_IDLE: '15m', TOKEN_EXPIRY_WARNING: '3d', OAUTH_ACCESS_TOKEN_TTL: '1h' });
    expect(c.dispatcher.timeoutMs).toBe(45_000);
    expect(c.scheduler.graceMs).toBe(7_200_000);
    expect(c.dashboardSession.idleMs).toBe(900_000);
    expect(c.tokenExpiryWarningMs).toBe(259_200_000);
    expect(c.oauthAccessTokenTtlSeconds).toBe(3_600);
    const err = refusal(() => parseConfig({ WEBHOOK_TIMEOUT: '45' }));
    expect(err.variable).toBe('WEBHOOK_TIMEOUT');
    expect(err.message).toBe('WEBHOOK_TIMEOUT must be a duration with a unit such as 250ms, 30s, 10m, 2h or 7d (at least 1ms) (got "45")');
  });

  it('the defaults are the previous release\'s', () => {
    const c = parseConfig({});
    expect(c.dispatcher.timeoutMs).toBe(30_000);
    expect(c.scheduler.graceMs).toBe(3_600_000);
    expect(c.dashboardSession).toEqual({ idleMs: 3_600_000, maxMs: 43_200_000 });
    expect(c.tokenExpiryWarningMs).toBe(7 * 86_400_000);
    expect(c.oauthAccessTokenTtlSeconds).toBe(86_400);
    expect(c.publisher).toMatchObject({ leaseMs: 60_000, pollMs: 500, confirmIntervalMs: 10_000, confirmDeadlineMs: 300_000, retryDelaysMs: [5_000, 30_000, 120_000], publishDeadlineMs: 7_200_000 });
    expect(c.sandboxDelayMs).toBe(50);
    expect(c.readyTimeoutMs).toBe(2_000);
    expect(c.idempotencyLeaseMs).toBe(60_000);
    expect(c.clientMetadataDocuments).toEqual({ enabled: true, fetchesPerMinute: 10, maxBytes: 5_120, timeoutMs: 2_500, cacheMaxSeconds: 3_600, failureCacheSeconds: 60 });
    expect(c.deprecatedSettings).toEqual([]);
  });
});

describe('names of the previous release, read for one more release', () => {
  it('a bare number under an old name keeps its old unit, and each old name is listed once for the deprecation line', () => {
    const c = parseConfig({ WEBHOOK_TIMEOUT_MS: '1500', DASHBOARD_SESSION_MAX_HOURS: '2', S3_URL_TTL_SECONDS: '600', MEDIA_STORE: 's3', S3_BUCKET: 'b', S3_REGION: 'r', JOB_LEASE_MS: '4000', X_API_URL: 'http://127.0.0.1:9/x/' });
    expect(c.dispatcher.timeoutMs).toBe(1_500);
    expect(c.dashboardSession.maxMs).toBe(7_200_000);
    expect(c.mediaStore).toMatchObject({ urlTtlSeconds: 600 });
    expect(c.publisher.leaseMs).toBe(4_000);
    expect(c.networks.x.apiBaseUrl).toBe('http://127.0.0.1:9/x');
    expect(c.deprecatedSettings).toEqual([
      'DASHBOARD_SESSION_MAX_HOURS (now DASHBOARD_SESSION_MAX=2h)',
      'WEBHOOK_TIMEOUT_MS (now WEBHOOK_TIMEOUT=1500ms)',
      'S3_URL_TTL_SECONDS (now S3_URL_TTL=600s)',
      'JOB_LEASE_MS (no longer a setting: its default applies from the next release)',
      'X_API_URL (no longer a setting: its default applies from the next release)',
    ]);
  });

  it('the new name wins over the old one, and a bad value under an old name is refused naming the old name', () => {
    const c = parseConfig({ WEBHOOK_TIMEOUT: '2s', WEBHOOK_TIMEOUT_MS: '1500' });
    expect(c.dispatcher.timeoutMs).toBe(2_000);
    expect(c.deprecatedSettings).toEqual(['WEBHOOK_TIMEOUT_MS (ignored: WEBHOOK_TIMEOUT is set)']);
    expect(refusal(() => parseConfig({ WEBHOOK_TIMEOUT_MS: 'soon' })).message).toMatch(/^WEBHOOK_TIMEOUT_MS must be a duration .* \(got "soon"\)$/);
    expect(refusal(() => parseConfig({ WORKER_POLL_MS: 'often' })).variable).toBe('WORKER_POLL_MS');
    expect(refusal(() => parseConfig({ JOB_RETRY_DELAYS_MS: '5000,x' })).variable).toBe('JOB_RETRY_DELAYS_MS');
    expect(parseConfig({ JOB_RETRY_DELAYS_MS: '100,200' }).publisher.retryDelaysMs).toEqual([100, 200]);
  });

  it('a process started with an old name logs exactly one deprecation line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'publisher-deprecated-'));
    try {
      const service = await startServiceProcess({
        DATABASE_URL: `sqlite:${join(dir, 'service.db')}`,
        WEBHOOK_TIMEOUT_MS: '1500',
        WORKER_POLL_MS: '100',
        ...overrides({ SANDBOX_DELAY: '0ms' }),
      });
      try {
        // Logged once the banner is out; the service then settles into its poll loops.
        const deadline = Date.now() + 10_000;
        while (!service.stdout().includes('Deprecated settings') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        await new Promise((r) => setTimeout(r, 300));
        const lines = `${service.stdout()}\n${service.stderr()}`.split('\n').filter((l) => l.includes('Deprecated settings'));
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain('WEBHOOK_TIMEOUT_MS (now WEBHOOK_TIMEOUT=1500ms)');
        expect(lines[0]).toContain('WORKER_POLL_MS (no longer a setting');
      } finally {
        await service.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('SERVICE_TEST_OVERRIDES: the knobs only tests turn', () => {
  it('sets them from one JSON object, merged key by key by the test helpers', () => {
    const env = serviceEnv(overrides({ WORKER_POLL: '20ms', X_API_URL: 'http://127.0.0.1:9' }), overrides({ JOB_LEASE: '2s' }), { PORT: '0' });
    const c = parseConfig(env);
    expect(c.publisher).toMatchObject({ pollMs: 20, leaseMs: 2_000 });
    expect(c.networks.x.apiBaseUrl).toBe('http://127.0.0.1:9');
    expect(c.deprecatedSettings).toEqual([]);
  });

  it('refuses an unknown knob, a bad value, or text that is not an object, naming the variable and the key', () => {
    const unknown = refusal(() => parseConfig({ SERVICE_TEST_OVERRIDES: '{"WORKER_POL":"20ms"}' }));
    expect(unknown.variable).toBe('SERVICE_TEST_OVERRIDES');
    expect(unknown.message).toContain('WORKER_POL');
    const bad = refusal(() => parseConfig({ SERVICE_TEST_OVERRIDES: '{"WORKER_POLL":"20"}' }));
    expect(bad.message).toMatch(/^SERVICE_TEST_OVERRIDES: WORKER_POLL must be a duration/);
    expect(refusal(() => parseConfig({ SERVICE_TEST_OVERRIDES: '[1]' })).message).toBe('SERVICE_TEST_OVERRIDES must be a JSON object');
    expect(refusal(() => parseConfig({ SERVICE_TEST_OVERRIDES: '{"X_TOKEN_URL":"ftp://x"}' })).message).toMatch(/^SERVICE_TEST_OVERRIDES: X_TOKEN_URL must be an http\(s\) URL/);
  });
});

describe('CONFIG_FILE: plans, prices and offers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'publisher-config-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const plan = { brands: 3, connections: 6, media_storage: 1_000_000, webhooks: 1, inspiration_library: 10, criacao_de_conteudos: 50, publicacoes: 100 };

  it('reads JSON and YAML, merging plans over the built-in ones and prices over the default table', () => {
    const json = parseConfig({ CONFIG_FILE: file('b.json', JSON.stringify({ plans: { pro: plan }, prices: { pro: { publicacao: 5 } } })) });
    expect(json.plans.pro).toEqual(plan);
    expect(json.plans.free).toBeDefined();
    expect(json.prices).toEqual({ ...DEFAULT_PRICES, pro: { publicacao: 5 } });
    expect(json.offers).toEqual(DEFAULT_OFFERS);
    const yaml = parseConfig({ CONFIG_FILE: file('b.yaml', 'offers:\n  - id: one\n    credits: 10\n    price: 1\n    currency: EUR\n    valid_days: 30\n') });
    expect(yaml.offers).toMatchObject([{ id: 'one', credits: 10, currency: 'EUR' }]);
  });

  it('a bad file is refused naming the file and the field', () => {
    const path = file('bad.json', JSON.stringify({ plans: { pro: { ...plan, brands: -1 } } }));
    const err = refusal(() => parseConfig({ CONFIG_FILE: path }));
    expect(err.variable).toBe('CONFIG_FILE');
    expect(err.message).toMatch(new RegExp(`^CONFIG_FILE ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: plans\\.pro\\.brands `));
    expect(refusal(() => parseConfig({ CONFIG_FILE: file('typo.json', '{"plan": {}}') })).message).toContain('plan');
    expect(refusal(() => parseConfig({ CONFIG_FILE: file('broken.json', '{') })).message).toMatch(/is not valid JSON/);
    expect(refusal(() => parseConfig({ CONFIG_FILE: join(dir, 'missing.json') })).message).toMatch(/cannot be read \(ENOENT\)/);
  });

  it('the environment JSON still works, and one table set in both places is refused', () => {
    expect(parseConfig({ PLANS_JSON: JSON.stringify({ pro: plan }) }).plans.pro).toEqual(plan);
    const both = refusal(() => parseConfig({ PLANS_JSON: JSON.stringify({ pro: plan }), CONFIG_FILE: file('p.json', JSON.stringify({ plans: { pro: plan } })) }));
    expect(both.variable).toBe('PLANS_JSON');
  });
});
