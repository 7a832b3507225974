import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect, it } from 'vitest';
import { mintApiKey } from '../../src/core/api-keys/api-keys.service.js';
import type { Content, CreatedContent } from '../../src/core/contents/contents.schema.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';
import { call, callFailing, closeClientsAfterEach, connect } from './tool-calls.js';

/**
 * Approvals over MCP with the official SDK client: an assistant holding a contributor's credential drafts, its
 * publish_content answers pending_approval with words telling the model a person must approve (and where), and
 * the approval tools work for the roles that may use them.
 */

closeClientsAfterEach();

async function contributorKey(s: TestServer, workspaceId: string): Promise<string> {
  const db = s.container.db.kysely;
  return (await db.transaction().execute((tx) => mintApiKey(tx, workspaceId, 'assistant', s.container.clock.now(), { role: 'contributor', brandIds: null, createdBy: null }))).apiKey;
}

describeEachDb('MCP approvals', (server) => {
  it("publish_content with a contributor's credential answers pending_approval and says a person must approve it on the Approvals page; nothing runs", async () => {
    const { ws, brandId } = await brandWithConnections(server(), ['threads', 'linkedin']);
    const assistant = await connect(server(), await contributorKey(server(), ws.workspace_id));
    const raw = (await assistant.callTool({ name: 'publish_content', arguments: { brand_id: brandId, target_platforms: ['threads', 'linkedin'], content_type: 'text', text: 'From the assistant' } })) as CallToolResult;
    expect(raw.isError ?? false).toBe(false);
    const created = raw.structuredContent as CreatedContent;
    expect(created).toMatchObject({ status: 'pending_approval', jobs: [] });
    const words = raw.content.filter((b) => b.type === 'text').map((b) => (b.type === 'text' ? b.text : '')).join('\n');
    expect(words).toContain('must approve it');
    expect(words).toContain('/dashboard/approvals');
    const links = raw.content.filter((b) => b.type === 'resource_link').map((b) => (b.type === 'resource_link' ? new URL(b.uri).pathname : ''));
    expect(links).toContain('/dashboard/approvals');
    const jobs = await server().container.db.kysely.selectFrom('jobs').select('id').where('content_id', '=', created.content_id).execute();
    expect(jobs).toEqual([]);

    // The assistant may not approve its own post, nor publish it now: refused on the permission, before the
    // content's state is looked at.
    const refused = await callFailing(assistant, 'approve_content', { content_id: created.content_id, publish_now: true });
    expect(refused).toMatchObject({ error: 'forbidden', permission: 'contents.approve' });
    const now = await callFailing(assistant, 'publish_content_now', { content_id: created.content_id });
    expect(now).toMatchObject({ error: 'forbidden', permission: 'contents.publish' });
    expect(now).not.toHaveProperty('status');

    // A draft it submits; the owner (a full key) lists, sends one back and approves the other.
    const draft = await call<CreatedContent>(assistant, 'publish_content', { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'A draft', draft: true });
    expect(draft.status).toBe('draft');
    expect((await call<Content>(assistant, 'submit_for_approval', { content_id: draft.content_id })).status).toBe('pending_approval');
    const owner = await connect(server(), ws.api_key);
    const pending = await call<{ data: Content[] }>(owner, 'list_pending_approvals', {});
    expect(pending.data.map((c) => c.content_id).sort()).toEqual([created.content_id, draft.content_id].sort());
    expect((await call<Content>(owner, 'request_changes', { content_id: draft.content_id, comment: 'Say which day.' })).status).toBe('changes_requested');
    const approved = await call<Content>(owner, 'approve_content', { content_id: created.content_id, publish_now: true });
    expect(approved.status).toBe('publishing');
    expect(approved.jobs).toHaveLength(2);
  });
});
