import { AsyncLocalStorage } from 'node:async_hooks';
import type { Response as OutboundResponse } from 'undici';
import { safeFetch, type OutboundPolicy } from '../src/outbound/safe-fetch.js';
import { publicUrlProblem } from '../src/outbound/url-rule.js';
import { withinDeadline } from '../src/outbound/deadline.js';
import type { RateLimiter } from '../src/web/rate-limit.js';
import { seconds, statusReason, unreachableReason } from './document-refusal-reasons.js';
import { ExpiringMap } from './expiring-map.js';

/**
 * OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document-02; MCP 2025-11-25 "Client ID
 * Metadata Documents"): a client whose `client_id` is an https URL is described by the JSON document at that URL.
 * oidc-provider 9 fetches, checks and caches the document (in memory, per process, never stored); this module is
 * everything around that which the service decides:
 * - which fetches happen at all (`allowFetch`): the service's public-https rule, a short memory of documents that
 *   failed, and a per-address throttle — the fetch happens before anyone has signed in, so anyone can ask for one;
 * - how they happen (`fetch`): through the same outbound-address guard as media and webhooks, never following a
 *   redirect, with a size and time cap, and only for a URL `allowFetch` has just approved;
 * - what a document may say (`shapeDocument`, `allowClient`): an allow-list of fields and a redirect fence;
 * - what a refused client is told (`explainRefusals`): the provider's answer is a fixed "fetch failed" or "fetch
 *   not allowed", so the short reason found here replaces its `error_description`.
 */

/** How documents are fetched and kept: the limits configuration reads (OAUTH_CIMD_*), and ALLOW_LOCAL_URLS. */
export interface ClientMetadataDocumentSettings {
  /** A larger document is refused (the draft suggests 5 KiB). */
  maxBytes: number;
  /** A slower answer is refused; at most the provider's own 2.5 s. */
  timeoutMs: number;
  /** How long a fetched document is reused at most, whatever its Cache-Control says (at least 60 s). */
  cacheMaxSeconds: number;
  /** How long a document that failed (unreachable, refused, malformed) is not fetched again. */
  failureCacheSeconds: number;
  /** `ALLOW_LOCAL_URLS`: loopback and private hosts are reachable, for local testing only. */
  allowLocal: boolean;
}

interface Log {
  info(details: object, message: string): void;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * The redirect fence: the first redirect URI of a metadata-document client that is neither http on a loopback
 * address (any port: RFC 8252 §7.3, a native app on the user's computer) nor https on the client_id's own origin,
 * or undefined when all pass. Nobody reviewed these URIs (the DCR normaliser never sees a document), and the
 * document's host is the only identity the consent page can show truthfully: a callback elsewhere would send
 * the code to a party the user was never shown. Claude Code, VS Code and Zed all pass.
 */
export function redirectOutsideFence(clientId: string, redirectUris: readonly string[]): string | undefined {
  let origin: string;
  try {
    origin = new URL(clientId).origin;
  } catch {
    return redirectUris[0] ?? clientId;
  }
  return redirectUris.find((uri) => {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return true;
    }
    if (url.protocol === 'http:') return !LOOPBACK_HOSTS.has(url.hostname);
    return url.protocol !== 'https:' || url.origin !== origin;
  });
}

/**
 * The document fields the provider is given; every other one is dropped, as the DCR normaliser does for
 * registrations (see `KEPT_REGISTRATION_FIELDS`): URIs the provider would fetch (`jwks_uri`, `sector_identifier_uri`, `request_uris`)
 * or redirect to (`post_logout_redirect_uris`), and client-controlled pictures and links (`logo_uri`, `tos_uri`,
 * ...), which nothing here shows. `client_secret*` and `token_endpoint_auth_method` stay so that the provider
 * refuses a document carrying a shared secret, as the draft requires.
 */
const KEPT_DOCUMENT_FIELDS = [
  'client_id',
  'client_name',
  'redirect_uris',
  'grant_types',
  'response_types',
  'token_endpoint_auth_method',
  'application_type',
  'software_id',
  'software_version',
  'client_secret',
  'client_secret_expires_at',
] as const;

/**
 * The document as the provider sees it: the kept fields, and `application_type` defaulting to `native`. Claude
 * Code's document names no type, and the default (`web`) matches a loopback redirect port exactly, so its
 * random port would fail; `native` ignores the port on loopback (RFC 8252 §7.3). This is the one place that
 * sees the document as written, so an explicit `web` is told apart from an absent type and kept. DCR clients
 * are not affected: their type is set by the registration normaliser.
 */
export function shapeDocument(document: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = Object.fromEntries(KEPT_DOCUMENT_FIELDS.filter((f) => document[f] !== undefined).map((f) => [f, document[f]]));
  kept.application_type ??= 'native';
  return kept;
}

/**
 * What one request to the authorization server learnt about metadata documents: the first refusal's reason, and
 * the documents it fetched and those the provider then built a client from (its own checks passed).
 */
interface Attempt {
  reason: string | undefined;
  fetched: Set<string>;
  built: Set<string>;
}

/** The part of a Koa context the refusal explainer reads and writes. */
interface ResponseContext {
  body: unknown;
}

const REFUSAL_ERRORS = new Set(['invalid_client', 'invalid_client_metadata']);

/** How long an approval from `allowFetch` waits for the fetch it approved (the provider fetches right after). */
const APPROVAL_MS = 10_000;

/** Reads at most `limit` bytes of a body; null when it is larger. */
async function readCapped(body: OutboundResponse['body'], limit: number): Promise<Buffer | null> {
  if (body === null) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) {
      await body.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The headers the provider reads to decide how long to keep a document (Cache-Control max-age, Expires). */
function cacheHeaders(from: OutboundResponse['headers']): Headers {
  const out = new Headers({ 'content-type': 'application/json' });
  for (const name of ['cache-control', 'expires']) {
    const value = from.get(name);
    if (value !== null) out.set(name, value);
  }
  return out;
}

export interface ClientMetadataDocuments {
  /** `features.clientIdMetadataDocument` for oidc-provider. */
  feature: {
    enabled: true;
    ack: 'draft-02';
    allowFetch(ctx: { ip?: string } | undefined, clientId: string): Promise<boolean>;
    allowClient(ctx: unknown, client: { clientId: string; redirectUris?: readonly string[] | undefined }): boolean;
    cacheDuration: { min: number; max: number };
  };
  /** The provider's `fetch`: the only outbound request the authorization server makes. */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /**
   * Provider middleware around every request: gives a refusal the reason found here as `error_description`, and
   * puts a document the provider refused after fetching it into the failure cache.
   */
  explainRefusals(ctx: ResponseContext, next: () => Promise<unknown>): Promise<void>;
  maxBytes: number;
}

/**
 * Builds the gate, the fetch and the fence for metadata documents.
 * @param throttle counts document fetches per client address (a limiter keyed by address).
 */
export function createClientMetadataDocuments(settings: ClientMetadataDocumentSettings, deps: { throttle: RateLimiter; log: Log }): ClientMetadataDocuments {
  const policy: OutboundPolicy = { allowLocal: settings.allowLocal };
  /** Documents that failed moments ago, with why; none is fetched again until its entry ends. */
  const failed = new ExpiringMap<string>(1_000);
  const approved = new ExpiringMap<true>(1_000);
  const attempts = new AsyncLocalStorage<Attempt>();

  /** Logs a refusal; the first one of a request is the reason its client is given. */
  function refuse(clientId: string, reason: string): false {
    deps.log.info({ client_id: clientId.slice(0, 300), reason }, 'client metadata document refused');
    const attempt = attempts.getStore();
    if (attempt !== undefined) attempt.reason ??= reason;
    return false;
  }

  function remember(clientId: string, reason: string): void {
    failed.set(clientId, reason, settings.failureCacheSeconds * 1000);
  }

  function fail(clientId: string, reason: string): Error {
    remember(clientId, reason);
    refuse(clientId, reason);
    return new Error(`client metadata document: ${reason}`);
  }

  async function fetchDocument(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    // Fail closed for anything else the provider might fetch (jwks_uri, sector_identifier_uri): those fields
    // are never kept, and a URL nobody approved never leaves the process.
    if (!approved.take(url)) throw new Error('the authorization server fetches only the client metadata documents it has approved');
    attempts.getStore()?.fetched.add(url);
    // One deadline covers the answer and its body; a fetch refused or failed before any answer is told apart.
    type Got = { res: OutboundResponse; body: Buffer | null } | { failure: string };
    const got = await withinDeadline(
      settings.timeoutMs,
      async (signal): Promise<Got> => {
        let res: OutboundResponse;
        try {
          // The provider's own SSRF filter acts only after a TCP connection and a TLS ClientHello, too late to keep
          // a private address from being reached; the guard refuses a non-public address before connecting, checks every address a name resolves to, and
          // connects to exactly the address it checked (no DNS rebinding). maxRedirects 0: a redirect is refused.
          res = await safeFetch(url, { method: 'GET', headers: { accept: 'application/json' }, signal, maxRedirects: 0 }, policy);
        } catch (err) {
          return { failure: unreachableReason(err, settings.timeoutMs) };
        }
        if (res.status !== 200) {
          await res.body?.cancel().catch(() => undefined);
          return { failure: statusReason(res.status) };
        }
        const declared = Number(res.headers.get('content-length') ?? NaN);
        if (declared > settings.maxBytes) return { res, body: null };
        return { res, body: await readCapped(res.body, settings.maxBytes) };
      },
      init?.signal ?? undefined,
    ).catch((): Got => ({ failure: `no complete answer within ${settings.timeoutMs} ms` }));
    if ('failure' in got) throw fail(url, got.failure);
    const { res, body } = got;
    if (body === null) {
      await res.body?.cancel().catch(() => undefined);
      throw fail(url, `larger than ${settings.maxBytes} bytes`);
    }
    let document: unknown;
    try {
      document = JSON.parse(body.toString('utf8'));
    } catch {
      throw fail(url, 'not JSON');
    }
    if (typeof document !== 'object' || document === null || Array.isArray(document)) throw fail(url, 'not a JSON object');
    const fields = document as Record<string, unknown>;
    // The provider refuses this too, with its own words; remembering it spares the next fetch.
    if (fields.client_id !== url) {
      remember(url, 'its client_id differs from its URL');
      refuse(url, 'its client_id differs from its URL');
    }
    return new Response(JSON.stringify(shapeDocument(fields)), { status: 200, headers: cacheHeaders(res.headers) });
  }

  return {
    feature: {
      enabled: true,
      ack: 'draft-02',
      async allowFetch(ctx, clientId) {
        const problem = publicUrlProblem(clientId, settings.allowLocal);
        if (problem !== null) return refuse(clientId, `the URL ${problem}`);
        const failure = failed.get(clientId);
        if (failure !== undefined) return refuse(clientId, `${failure.value}; not fetched again for ${seconds(failure.msLeft)} s`);
        // Fetched in this very request and not kept: the provider refused it, and its error handler is looking
        // the client up again. That second look gets the same answer without a second fetch or budget point.
        const attempt = attempts.getStore();
        if (attempt?.fetched.has(clientId) === true && !attempt.built.has(clientId)) return false;
        // Outside a request (a token check, the consent page) the provider has no context: one shared budget.
        const decision = await deps.throttle.consume(ctx?.ip ?? 'no-address');
        if (!decision.allowed) return refuse(clientId, `too many document fetches from this address, retry in ${seconds(decision.resetAt - Date.now())} s`);
        approved.set(clientId, true, APPROVAL_MS);
        return true;
      },
      // Runs on every resolution, cached or fetched, so a document refused once is refused from the cache too.
      allowClient(_ctx, client) {
        attempts.getStore()?.built.add(client.clientId);
        const outside = redirectOutsideFence(client.clientId, client.redirectUris ?? []);
        return outside === undefined ? true : refuse(client.clientId, `redirect URI ${outside.slice(0, 300)} is neither loopback nor on the client_id's origin`);
      },
      cacheDuration: { min: Math.min(60, settings.cacheMaxSeconds), max: settings.cacheMaxSeconds },
    },
    fetch: fetchDocument,
    async explainRefusals(ctx, next) {
      const attempt: Attempt = { reason: undefined, fetched: new Set(), built: new Set() };
      await attempts.run(attempt, next);
      const body = ctx.body;
      if (body === null || typeof body !== 'object' || !REFUSAL_ERRORS.has(String((body as { error?: unknown }).error))) return;
      const answer = body as { error: string; error_description?: string };
      // A document fetched here that never reached `allowClient` was refused by the provider's own checks
      // (a shared secret, a grant or redirect URI its schema refuses): remembered like any failure, with the
      // provider's words, so the next tries are answered without fetching it again.
      for (const url of attempt.fetched) {
        if (!attempt.built.has(url) && failed.get(url) === undefined) remember(url, (answer.error_description ?? 'refused by the authorization server').replace(/^client_id metadata document:? */, ''));
      }
      if (attempt.reason !== undefined) answer.error_description = `client_id metadata document: ${attempt.reason}`;
    },
    maxBytes: settings.maxBytes,
  };
}
