import { type AssistantEndpoint, assistantEndpoint } from '../../core/assistant-reach.js';
import { html, type SafeHtml } from '../../web/html.js';
import type { PageRouter } from '../page-router.js';

export const CONNECT_ASSISTANT = '/dashboard/connect-assistant';

/** The name an assistant lists the service under in the snippets. */
const SERVER_NAME = 'publisher';
/** Stands for the person's API key in the snippets that carry one: it is never put on a page. */
const KEY_PLACEHOLDER = 'PASTE-YOUR-API-KEY-HERE';

/**
 * A Copy button named by its own text and the box's label ("Copy VS Code, …"): its visible word stays part of its
 * name when the script turns it into "Copied", and a screen reader hears which box it copies.
 */
function copyButton(boxId: string, labelId: string): SafeHtml {
  return html`<button type="button" id="${boxId}-copy" data-copy="${boxId}" aria-labelledby="${boxId}-copy ${labelId}">Copy</button>`;
}

/** A block of text to copy: a read-only box with its label and a Copy button (app.js copies the box's value). */
function snippet(id: string, label: string, text: string): SafeHtml {
  const rows = Math.min(text.split('\n').length, 20);
  return html`<div class="snippet">
  <label for="${id}" id="${id}-label">${label}</label>
  <div class="secret-row">
    <textarea id="${id}" class="code" readonly rows="${rows}" spellcheck="false">${text}</textarea>
    ${copyButton(id, `${id}-label`)}
  </div>
</div>`;
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** VS Code's mcp.json: `servers`, each with `type` and `url`; a key is asked once and kept in VS Code's secret store. */
function vsCodeConfig(mcpUrl: string, withKey: boolean): string {
  if (!withKey) return json({ servers: { [SERVER_NAME]: { type: 'http', url: mcpUrl } } });
  return json({
    inputs: [{ type: 'promptString', id: 'publisher-api-key', description: 'API key of the publishing workspace', password: true }],
    servers: { [SERVER_NAME]: { type: 'http', url: mcpUrl, headers: { Authorization: 'Bearer ${input:publisher-api-key}' } } },
  });
}

/** Cursor's mcp.json: `mcpServers`, a remote server by its `url` (and `headers`). */
function cursorConfig(mcpUrl: string, withKey: boolean): string {
  return json({ mcpServers: { [SERVER_NAME]: withKey ? { url: mcpUrl, headers: { Authorization: `Bearer ${KEY_PLACEHOLDER}` } } : { url: mcpUrl } } });
}

/** A shell argument in single quotes, so an address with `&` or spaces reaches the command whole. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Why cloud assistants cannot use this address, when they cannot; nothing when they can. */
function reachWarning(endpoint: AssistantEndpoint): SafeHtml {
  const local = endpoint.reach !== 'internet';
  if (!local && endpoint.https) return html``;
  const where =
    endpoint.reach === 'this_computer'
      ? 'This service’s address only works on the computer it runs on.'
      : endpoint.reach === 'local_network'
        ? 'This service’s address only works inside your own network.'
        : 'This service’s address is not secure (http, not https).';
  return html`<div class="callout" role="note" id="reach-warning">
  <p class="warn">${where} Claude and ChatGPT cannot use it.</p>
  <p>Claude (on the web, in the desktop and phone apps) and ChatGPT connect from their companies’ servers on the internet, not from your computer, and they need an <strong>https</strong> address they can reach from there.
  ${
    local
      ? html`Assistants that run ${endpoint.reach === 'this_computer' ? 'on this computer' : 'on a computer of this network'} can use it: VS Code, Cursor and Claude Code.`
      : html`VS Code, Cursor and Claude Code can use it.`
  }</p>
  <p>To use Claude or ChatGPT, the person who runs this service puts it on a public https address and sets <code>BASE_URL</code> to that address; this page then shows the new one.</p>
</div>`;
}

/**
 * "Connect an assistant": the MCP address, what to paste into Claude, ChatGPT, VS Code, Cursor and Claude Code, the
 * two ways in (signing in on the consent page, or an API key as a Bearer header), and a warning when cloud
 * assistants cannot reach `BASE_URL`. Written for someone who has never configured an MCP client.
 */
export function connectAssistantPages(pages: PageRouter): void {
  pages.page(CONNECT_ASSISTANT, (ctx) => {
    const endpoint = assistantEndpoint(ctx.deps.baseUrl);
    const { mcpUrl } = endpoint;
    return Promise.resolve({
      title: 'Connect an assistant',
      active: 'connect-assistant' as const,
      body: html`<h1>Connect an assistant</h1>
<p>An AI assistant connected here can do what you do in this dashboard for this workspace: write posts, schedule them, publish them and tell you how they went. You give it one address, then let it in once.</p>
<section class="card" aria-labelledby="address-h">
  <h2 id="address-h">1. The address to give your assistant</h2>
  <p id="mcp-url-label" class="vh">The assistant address</p>
  <div class="secret-row">
    <input id="mcp-url" type="text" readonly value="${mcpUrl}" aria-labelledby="mcp-url-label" spellcheck="false">
    ${copyButton('mcp-url', 'mcp-url-label')}
  </div>
  <p class="muted">Copy it exactly as it is: the same place written another way (for example <code>localhost</code> instead of <code>127.0.0.1</code>) is refused at sign-in.</p>
  ${reachWarning(endpoint)}
</section>
<section class="card" aria-labelledby="ways-h">
  <h2 id="ways-h">2. Two ways to let it in</h2>
  <h3>Sign in with the approval page (easiest)</h3>
  <p>Add the address without anything else. The assistant opens a page of this service in your browser: paste an API key of this workspace there and press <strong>Approve</strong>. The assistant never sees the key; it receives its own pass, which stops working when you disconnect it on <a href="/dashboard/connected-apps">Connected apps</a> or revoke the key you approved it with. A pass lasts a day unless your installation says otherwise; then the assistant asks you to approve it again.</p>
  <h3>An API key in the settings</h3>
  <p>VS Code, Cursor and Claude Code also accept a key written into their settings, sent with every request as the header <code>Authorization: Bearer</code> followed by the key. Create a key just for that assistant on <a href="/dashboard/api-keys">API keys</a> and name it after the assistant, so you can revoke it alone. Anyone who can read the settings file can act for this workspace.</p>
</section>
<section class="card" aria-labelledby="claude-h">
  <h2 id="claude-h">Claude (claude.ai, desktop and phone apps)</h2>
  <ol>
    <li>In Claude, open <strong>Settings</strong>, then <strong>Connectors</strong>, and choose <strong>Add custom connector</strong>.</li>
    <li>Name: <strong>Publisher</strong>. Remote MCP server URL: the address above. Leave the advanced settings empty.</li>
    <li>Press <strong>Add</strong>, then <strong>Connect</strong>: the approval page of this service opens.</li>
  </ol>
  <p class="muted">Claude connects from Anthropic’s servers, even in the desktop app, so this needs an https address on the internet.</p>
</section>
<section class="card" aria-labelledby="chatgpt-h">
  <h2 id="chatgpt-h">ChatGPT</h2>
  <ol>
    <li>In ChatGPT, open <strong>Settings</strong>, then <strong>Apps &amp; Connectors</strong>, then <strong>Advanced settings</strong>, and turn on <strong>Developer mode</strong> (offered on some plans only).</li>
    <li>Choose <strong>Create</strong>. Name: <strong>Publisher</strong>. MCP server URL: the address above. Authentication: <strong>OAuth</strong>.</li>
    <li>Press <strong>Create</strong>: the approval page of this service opens.</li>
  </ol>
  <p class="muted">ChatGPT also connects from its own servers: this needs an https address on the internet.</p>
</section>
<section class="card" aria-labelledby="vscode-h">
  <h2 id="vscode-h">VS Code</h2>
  <p>Create the file <code>.vscode/mcp.json</code> in your project (or run <strong>MCP: Open User Configuration</strong> from the command palette to use it in every project) with this, then press <strong>Start</strong> above the server’s name: the approval page opens.</p>
  ${snippet('vscode-config', 'VS Code, signing in with the approval page', vsCodeConfig(mcpUrl, false))}
  <p>With an API key instead: VS Code asks for the key the first time and keeps it in its own secret storage, not in the file.</p>
  ${snippet('vscode-config-key', 'VS Code, with an API key', vsCodeConfig(mcpUrl, true))}
</section>
<section class="card" aria-labelledby="cursor-h">
  <h2 id="cursor-h">Cursor</h2>
  <p>Put this in <code>~/.cursor/mcp.json</code> (every project) or <code>.cursor/mcp.json</code> (one project); if the file already lists servers, add the <code>${SERVER_NAME}</code> entry beside them. Cursor lists the server in its settings, under <strong>MCP</strong> (<strong>Tools &amp; MCP</strong> in recent versions): press <strong>Connect</strong> to open the approval page.</p>
  ${snippet('cursor-config', 'Cursor, signing in with the approval page', cursorConfig(mcpUrl, false))}
  <p>With an API key instead: replace <code>${KEY_PLACEHOLDER}</code> with the key.</p>
  ${snippet('cursor-config-key', 'Cursor, with an API key', cursorConfig(mcpUrl, true))}
</section>
<section class="card" aria-labelledby="claude-code-h">
  <h2 id="claude-code-h">Claude Code</h2>
  <p>Run this in a terminal, then type <code>/mcp</code> in Claude Code and choose the server to open the approval page.</p>
  ${snippet('claude-code-command', 'Claude Code, signing in with the approval page', `claude mcp add --transport http ${SERVER_NAME} ${shellQuote(mcpUrl)}`)}
  <p>With an API key instead (replace <code>${KEY_PLACEHOLDER}</code> with the key):</p>
  ${snippet('claude-code-command-key', 'Claude Code, with an API key', `claude mcp add --transport http ${SERVER_NAME} ${shellQuote(mcpUrl)} --header ${shellQuote(`Authorization: Bearer ${KEY_PLACEHOLDER}`)}`)}
</section>
<p>Once connected, the assistant is listed on <a href="/dashboard/connected-apps">Connected apps</a> (when it signed in with the approval page), where one click disconnects it.</p>`,
    });
  });
}
