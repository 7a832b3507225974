import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import * as oc from 'openid-client';
import { expect, it } from 'vitest';
import { claudeCodeDocument, randomLoopbackPort, useTrustedDocumentHost } from '../oauth/support/document-host.js';
import { Browser } from '../support/oauth-browser.js';
import { describeEachDb } from '../support/server.js';

/**
 * MCP clients that identify themselves with a Client ID Metadata Document served locally over https: the SDK v1
 * client's own CIMD support with Claude Code's document, and openid-client driving the code flow by hand. Both
 * end with tools/list on /mcp through the SDK v1 client. ALLOW_LOCAL_URLS is the switch the media and webhook
 * tests use to let the service reach a loopback host; nothing else is relaxed.
 */

/** An MCP host that names itself by its metadata document's URL (SEP-991), as Claude Code does. */
class DocumentClientHost implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  readonly steps: string[] = [];

  constructor(
    readonly clientMetadataUrl: string,
    readonly redirectUrl: string,
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'Claude Code', redirect_uris: [this.redirectUrl], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.steps.push(`client ${info.client_id}`);
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.steps.push('tokens');
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.steps.push('authorize');
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

async function listToolsWith(mcpUrl: URL, accessToken: string): Promise<string[]> {
  const client = new Client({ name: 'cimd host', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: { authorization: `Bearer ${accessToken}` } } }));
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

const host = useTrustedDocumentHost();

describeEachDb(
  'MCP clients identified by a Client ID Metadata Document',
  (server, kind) => {
    it("Claude Code's document (no application_type, port-less loopback callback) on a random port, through the SDK v1 client's own CIMD support", async () => {
      const ws = await server().workspace();
      const base = server().service.baseUrl;
      const path = `/claude-code-${kind.name}/client-metadata.json`;
      const clientId = host().serve(path, claudeCodeDocument, { headers: { 'cache-control': 'max-age=300' } });
      const redirect = `http://127.0.0.1:${randomLoopbackPort()}/callback`;
      const provider = new DocumentClientHost(clientId, redirect);
      const mcpUrl = new URL(`${base}/mcp`);

      const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
      await expect(new Client({ name: 'host', version: '1.0.0' }).connect(first)).rejects.toThrow(/Unauthorized/i);
      // No registration: the SDK saw client_id_metadata_document_supported and used the document's URL.
      expect(provider.steps).toEqual([`client ${clientId}`, 'authorize']);
      const authUrl = provider.authorizationUrl!;
      expect(authUrl.searchParams.get('client_id')).toBe(clientId);
      expect(authUrl.searchParams.get('redirect_uri')).toBe(redirect);

      const callback = await new Browser().authorize(authUrl.toString(), base, ws.api_key);
      expect(`${callback.origin}${callback.pathname}`).toBe(redirect);
      await first.finishAuth(callback.searchParams.get('code')!);
      expect(provider.saved?.access_token).toBeTruthy();
      expect(provider.saved?.refresh_token).toBeUndefined();

      const client = new Client({ name: 'host', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('publish_content');
      await client.close();
      // One fetch served authorize, consent, resume and the token exchange: the document was cached.
      expect(host().fetches(path)).toBe(1);
    });

    it('openid-client: authorization code with PKCE on a random loopback port, then the token lists tools over /mcp', async () => {
      const ws = await server().workspace();
      const base = server().service.baseUrl;
      const issuer = new URL(`${base}/api/oauth/mcp`);
      const path = `/editor-${kind.name}/oauth/client-metadata.json`;
      // An editor's document naming a type of its own (the fence for an https callback on the document's origin,
      // VS Code's other shape, is checked in test/oauth/cimd-fence.test.ts: this host is loopback, where a
      // native app's https callback is refused by the provider).
      const clientId = host().serve(path, (id) => ({
        client_id: id,
        client_name: 'Editor',
        application_type: 'native',
        redirect_uris: ['http://127.0.0.1/'],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      }));
      const config = await oc.discovery(issuer, clientId, undefined, oc.None(), { execute: [oc.allowInsecureRequests] });
      expect(config.serverMetadata().client_id_metadata_document_supported).toBe(true);
      expect(config.serverMetadata().token_endpoint_auth_methods_supported).toContain('none');

      const redirect = `http://127.0.0.1:${randomLoopbackPort()}/`;
      const verifier = oc.randomPKCECodeVerifier();
      const state = oc.randomState();
      const resource = `${base}/mcp`;
      const authUrl = oc.buildAuthorizationUrl(config, { redirect_uri: redirect, scope: 'mcp', state, resource, code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
      const callback = await new Browser().authorize(authUrl.href, base, ws.api_key);
      const tokens = await oc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }, { resource });
      expect(tokens.scope).toBe('mcp');
      expect(tokens.refresh_token).toBeUndefined();

      expect(await listToolsWith(new URL(resource), tokens.access_token)).toContain('get_content');
      // The token acts for the workspace that approved it, on REST too.
      const keys = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: tokens.access_token });
      expect(keys.status).toBe(200);
    });
  },
  { ALLOW_LOCAL_URLS: 'true' },
);
