import { expect, it } from 'vitest';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { describeEachDb, type TestServer } from '../support/server.js';

interface RestClient {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
}

const CALLBACK = 'https://chat.openai.com/aip/g-123/oauth/callback';

async function restList(server: TestServer, ws: { workspace_id: string; api_key: string }): Promise<RestClient[]> {
  const res = await server.request<{ data: RestClient[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/oauth-clients`, { key: ws.api_key });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** The text of the error shown under a field, by the field's id. */
function fieldError(html: string, id: string): string | undefined {
  const match = new RegExp(`<p class="field-error" id="${id}-error">([^<]*)</p>`).exec(html);
  return match ? textOf(match[1]!) : undefined;
}

describeEachDb('dashboard: OAuth clients', (server) => {
  async function signedIn() {
    const ws = await server().workspace();
    const client = new DashboardClient(server().url);
    await client.signIn(ws.api_key);
    return { ws, client };
  }

  async function createViaForm(client: DashboardClient, name: string, uris: string) {
    await client.get('/dashboard/oauth-clients');
    return client.post('/dashboard/oauth-clients', { client_name: name, redirect_uris: uris });
  }

  it('creates a client from the form, shows its secret once, and never again', async () => {
    const { ws, client } = await signedIn();
    const list = await client.get('/dashboard/oauth-clients');
    expect(textOf(list.html)).toContain(`${server().container.config.baseUrl}/.well-known/oauth-authorization-server`);
    expect(textOf(list.html)).toContain(`${server().container.config.baseUrl}/mcp`);

    const page = await createViaForm(client, 'My GPT', `${CALLBACK}\n\n  http://localhost:8080/cb  \n`);
    expect(page.status).toBe(201);
    const secret = /id="new-client-secret" type="text" readonly value="(mcp_csec_[^"]+)"/.exec(page.html)?.[1];
    const clientId = /id="new-client-id" type="text" readonly value="(mcp_client_[^"]+)"/.exec(page.html)?.[1];
    expect(secret).toBeDefined();
    expect(clientId).toBeDefined();
    expect(page.html).toContain('data-copy="new-client-id"');
    expect(page.html).toContain('data-copy="new-client-secret"');

    const rest = await restList(server(), ws);
    expect(rest).toEqual([expect.objectContaining({ client_id: clientId, client_name: 'My GPT', redirect_uris: [CALLBACK, 'http://localhost:8080/cb'] })]);

    const again = await client.get('/dashboard/oauth-clients');
    expect(again.html).not.toContain(secret!);
    expect(textOf(again.html)).toContain(clientId!);
    expect(textOf(again.html)).toContain('Edit My GPT');
    const edit = await client.get(`/dashboard/oauth-clients/${clientId}`);
    expect(edit.status).toBe(200);
    expect(edit.html).not.toContain(secret!);
    expect(edit.html).not.toContain('mcp_csec_');
  });

  it('an unacceptable redirect URI is shown under the field, naming the line, and nothing is created', async () => {
    const { ws, client } = await signedIn();
    const script = await createViaForm(client, 'Bad', 'javascript:alert(1)');
    expect(script.status).toBe(400);
    expect(fieldError(script.html, 'client-redirect-uris')).toMatch(/^Line 1 \(javascript:alert\(1\)\) is not accepted/);
    expect(script.html).toContain('aria-invalid="true"');

    const notUrl = await createViaForm(client, 'Bad', `${CALLBACK}\nnot a url`);
    expect(notUrl.status).toBe(400);
    expect(fieldError(notUrl.html, 'client-redirect-uris')).toMatch(/^Line 2 \(not a url\)/);
    // What was typed stays in the form.
    expect(notUrl.html).toContain(`${CALLBACK}\nnot a url</textarea>`);

    const empty = await createViaForm(client, '  ', '');
    expect(empty.status).toBe(400);
    expect(fieldError(empty.html, 'client-name')).toBe('Enter a name.');
    expect(fieldError(empty.html, 'client-redirect-uris')).toBe('Enter at least one redirect URI, one per line.');

    expect(await restList(server(), ws)).toEqual([]);
  });

  it('edits the name and redirect URIs; a bad line is refused next to the field', async () => {
    const { ws, client } = await signedIn();
    const created = await createViaForm(client, 'Draft', 'https://example.com/placeholder');
    const clientId = /value="(mcp_client_[^"]+)"/.exec(created.html)![1]!;

    const edit = await client.get(`/dashboard/oauth-clients/${clientId}`);
    expect(textOf(edit.html)).toContain('OAuth client');
    const refused = await client.post(`/dashboard/oauth-clients/${clientId}`, { client_name: 'Draft', redirect_uris: 'https://ok.example/cb\nhttps://x.example/cb#frag' });
    expect(refused.status).toBe(400);
    expect(fieldError(refused.html, 'edit-redirect-uris')).toMatch(/^Line 2 /);
    expect((await restList(server(), ws))[0]!.redirect_uris).toEqual(['https://example.com/placeholder']);

    const saved = await client.post(`/dashboard/oauth-clients/${clientId}`, { client_name: 'Real GPT', redirect_uris: `${CALLBACK}\r\nhttps://second.example/cb` });
    expect(saved.status).toBe(200);
    expect(saved.url).toMatch(new RegExp(`/dashboard/oauth-clients/${clientId}$`));
    expect(textOf(saved.html)).toContain('Changes saved.');
    const rest = await server().request<RestClient>('GET', `/api/v1/workspaces/${ws.workspace_id}/oauth-clients/${clientId}`, { key: ws.api_key });
    expect(rest.body).toMatchObject({ client_name: 'Real GPT', redirect_uris: [CALLBACK, 'https://second.example/cb'] });
  });

  it('deletes a client: it is gone from the list and from the API', async () => {
    const { ws, client } = await signedIn();
    const created = await createViaForm(client, 'Doomed', CALLBACK);
    const clientId = /value="(mcp_client_[^"]+)"/.exec(created.html)![1]!;
    const edit = await client.get(`/dashboard/oauth-clients/${clientId}`);
    expect(edit.html).toContain('data-confirm="Delete Doomed? Its grants and tokens stop working at once."');

    const after = await client.post(`/dashboard/oauth-clients/${clientId}/delete`, {});
    expect(after.url).toMatch(/\/dashboard\/oauth-clients$/);
    expect(textOf(after.html)).toContain('The client “Doomed” was deleted.');
    expect(textOf(after.html)).toContain('No OAuth clients yet.');
    const rest = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/oauth-clients/${clientId}`, { key: ws.api_key });
    expect(rest.status).toBe(404);
  });

  it("another workspace's client is a 404 page and cannot be changed or deleted", async () => {
    const owner = await signedIn();
    const created = await createViaForm(owner.client, 'Theirs', CALLBACK);
    const clientId = /value="(mcp_client_[^"]+)"/.exec(created.html)![1]!;

    const { client } = await signedIn();
    const page = await client.get(`/dashboard/oauth-clients/${clientId}`);
    expect(page.status).toBe(404);
    expect(textOf(page.html)).toContain('Not found');
    await client.get('/dashboard/oauth-clients');
    const edit = await client.post(`/dashboard/oauth-clients/${clientId}`, { client_name: 'Hijacked', redirect_uris: 'https://evil.example/cb' });
    expect(edit.status).toBe(404);
    const del = await client.post(`/dashboard/oauth-clients/${clientId}/delete`, {});
    expect(textOf(del.html)).toContain('That client no longer exists.');
    expect(await restList(server(), owner.ws)).toEqual([expect.objectContaining({ client_id: clientId, client_name: 'Theirs', redirect_uris: [CALLBACK] })]);
  });
});
