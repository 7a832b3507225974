import { describe, expect, it } from 'vitest';
import { assistantEndpoint } from '../../src/core/assistant-reach.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { describeEachDb, type TestServer } from '../support/server.js';

const PAGE = '/dashboard/connect-assistant';

/** The text of a read-only box (input value or textarea body) by its id, with the page's escaping undone. */
function boxText(html: string, id: string): string {
  const textarea = new RegExp(`<textarea id="${id}"[^>]*>([^<]*)</textarea>`).exec(html)?.[1];
  const input = new RegExp(`<input id="${id}" type="text" readonly value="([^"]*)"`).exec(html)?.[1];
  const raw = textarea ?? input;
  if (raw === undefined) throw new Error(`no box #${id} on the page`);
  return raw.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
}

async function signedIn(server: TestServer) {
  const ws = await server.workspace();
  const client = new DashboardClient(server.url);
  await client.signIn(ws.api_key);
  return { ws, client };
}

function expectSnippets(html: string, mcpUrl: string): void {
  expect(boxText(html, 'mcp-url')).toBe(mcpUrl);
  // VS Code: `servers` with a typed http entry; Cursor: `mcpServers` by url (their documented mcp.json shapes).
  expect(JSON.parse(boxText(html, 'vscode-config'))).toEqual({ servers: { publisher: { type: 'http', url: mcpUrl } } });
  expect(JSON.parse(boxText(html, 'vscode-config-key'))).toEqual({
    inputs: [{ type: 'promptString', id: 'publisher-api-key', description: expect.any(String), password: true }],
    servers: { publisher: { type: 'http', url: mcpUrl, headers: { Authorization: 'Bearer ${input:publisher-api-key}' } } },
  });
  expect(JSON.parse(boxText(html, 'cursor-config'))).toEqual({ mcpServers: { publisher: { url: mcpUrl } } });
  expect(JSON.parse(boxText(html, 'cursor-config-key'))).toEqual({ mcpServers: { publisher: { url: mcpUrl, headers: { Authorization: 'Bearer PASTE-YOUR-API-KEY-HERE' } } } });
  for (const id of ['mcp-url', 'vscode-config', 'vscode-config-key', 'cursor-config', 'cursor-config-key', 'claude-code-command', 'claude-code-command-key']) {
    expect(html, `copy button for #${id}`).toContain(`data-copy="${id}"`);
  }
}

describeEachDb('dashboard: connect an assistant, on a loopback BASE_URL', (server) => {
  it('gives the MCP address, each client’s snippet, both ways in, and says cloud assistants cannot reach this address', async () => {
    const { ws, client } = await signedIn(server());
    const page = await client.get(PAGE);
    expect(page.status).toBe(200);
    const mcpUrl = `${server().container.config.baseUrl}/mcp`;
    expect(mcpUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expectSnippets(page.html, mcpUrl);
    expect(boxText(page.html, 'claude-code-command')).toBe(`claude mcp add --transport http publisher '${mcpUrl}'`);

    const text = textOf(page.html);
    for (const words of ['Claude', 'ChatGPT', 'VS Code', 'Cursor', 'Claude Code', 'Add custom connector', 'Developer mode', '.vscode/mcp.json', '~/.cursor/mcp.json', 'Approve', 'Authorization: Bearer']) {
      expect(text).toContain(words);
    }
    expect(page.html).toContain('id="reach-warning"');
    expect(text).toContain('only works on the computer it runs on. Claude and ChatGPT cannot use it.');
    expect(text).toContain('Assistants that run on this computer can use it: VS Code, Cursor and Claude Code.');
    // The key the session signed in with is never put on the page.
    expect(page.html).not.toContain(ws.api_key);
  });

  it('is in the navigation of every page, and Connected apps points to it while no app is connected', async () => {
    const { client } = await signedIn(server());
    const overview = await client.get('/dashboard');
    expect(overview.html).toContain(`<a href="${PAGE}">Connect an assistant</a>`);
    const own = await client.get(PAGE);
    expect(own.html).toContain(`<a href="${PAGE}" aria-current="page">Connect an assistant</a>`);
    const apps = await client.get('/dashboard/connected-apps');
    expect(textOf(apps.html)).toContain('No app is connected to this workspace.');
    expect(apps.html).toContain(`<a href="${PAGE}">Connect an assistant</a>`);
  });

  it('needs a session like every page', async () => {
    const res = await fetch(new URL(PAGE, server().url), { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toMatch(/^\/dashboard\/sign-in/);
  });
});

// An address with characters HTML and shells treat specially: it must reach every box intact and inert.
const AWKWARD = "https://publisher.example.com/team&co's<b>";

describeEachDb(
  'dashboard: connect an assistant, on a public https BASE_URL',
  (server) => {
    it('escapes the address everywhere and gives no reach warning', async () => {
      const { client } = await signedIn(server());
      const page = await client.get(PAGE);
      expect(page.status).toBe(200);
      const mcpUrl = `${server().container.config.baseUrl}/mcp`;
      expect(mcpUrl).toBe(`${AWKWARD}/mcp`);
      expectSnippets(page.html, mcpUrl);
      expect(page.html).not.toContain('<b>');
      expect(page.html).toContain('team&amp;co&#39;s&lt;b&gt;/mcp');
      // The shell command quotes the address so `&` and `'` cannot end it.
      expect(boxText(page.html, 'claude-code-command')).toBe(`claude mcp add --transport http publisher 'https://publisher.example.com/team&co'\\''s<b>/mcp'`);
      expect(page.html).not.toContain('id="reach-warning"');
    });
  },
  { BASE_URL: AWKWARD },
);

describeEachDb(
  'dashboard: connect an assistant, on a private network address',
  (server) => {
    it('says the address only works inside the network', async () => {
      const { client } = await signedIn(server());
      const text = textOf((await client.get(PAGE)).html);
      expect(text).toContain('only works inside your own network. Claude and ChatGPT cannot use it.');
      expect(text).toContain('Assistants that run on a computer of this network can use it');
    });
  },
  { BASE_URL: 'http://192.168.1.20:8080' },
);

describe('who can reach an MCP address', () => {
  it.each([
    ['http://127.0.0.1:8080', 'this_computer', false],
    ['http://localhost:8080/', 'this_computer', false],
    ['http://[::1]:8080', 'this_computer', false],
    ['http://0.0.0.0:8080', 'this_computer', false],
    ['http://10.0.0.5', 'local_network', false],
    ['http://172.20.1.1', 'local_network', false],
    ['http://[fd00::1]', 'local_network', false],
    ['http://publisher:8080', 'local_network', false],
    ['http://nas.local', 'local_network', false],
    ['http://203.0.113.9', 'internet', false],
    ['https://publisher.example.com', 'internet', true],
  ] as const)('%s → %s', (baseUrl, reach, https) => {
    expect(assistantEndpoint(baseUrl)).toEqual({ mcpUrl: `${baseUrl.replace(/\/+$/, '')}/mcp`, reach, https });
  });
});
