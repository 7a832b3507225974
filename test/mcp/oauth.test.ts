import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { brandWithConnections } from '../support/factories.js';
import { Browser } from '../support/oauth-browser.js';
import { describeEachDb } from '../support/server.js';

const REDIRECT = 'http://127.0.0.1:43210/oauth/callback';

/** What an MCP host keeps for one server: its registration, the PKCE verifier and the tokens. */
class RecordingProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  readonly steps: string[] = [];

  get redirectUrl(): string {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'SDK test host', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.steps.push('registered');
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

describeEachDb(
  'MCP with OAuth, end to end with the SDK client',
  (server) => {
    it('401 → resource metadata → AS metadata → DCR → PKCE authorize with consent → token → tools/list → publish_content → get_content', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const base = server().service.baseUrl;
      const provider = new RecordingProvider();
      const mcpUrl = new URL(`${base}/mcp`);

      const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
      await expect(new Client({ name: 'host', version: '1.0.0' }).connect(first)).rejects.toThrow(/Unauthorized/i);
      expect(provider.steps).toEqual(['registered', 'authorize']);
      expect(provider.client?.client_id).toMatch(/^mcp_client_/);
      const authUrl = provider.authorizationUrl!;
      expect(authUrl.searchParams.get('code_challenge_method')).toBe('S256');
      expect(authUrl.searchParams.get('resource')).toBe(`${base}/mcp`);

      const callback = await new Browser().authorize(authUrl.toString(), base, ws.api_key);
      await first.finishAuth(callback.searchParams.get('code')!);
      expect(provider.saved?.access_token).toBeTruthy();

      const client = new Client({ name: 'host', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('publish_content');

      const published = await client.callTool({
        name: 'publish_content',
        arguments: { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'Posted by an assistant over OAuth.' },
      });
      expect(published.isError).toBeFalsy();
      const contentId = (published.structuredContent as { content_id: string }).content_id;
      await server().settle();
      const read = await client.callTool({ name: 'get_content', arguments: { content_id: contentId } });
      const content = read.structuredContent as { status: string; jobs: { status: string; platform_slug: string }[] };
      expect(content.status).toBe('published');
      expect(content.jobs).toEqual([expect.objectContaining({ platform_slug: 'threads', status: 'published' })]);
      await client.close();
    });
  },
  {},
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
