/**
 * The reference's table of contents: every tag an operation carries, in reading order, with what it covers, and
 * the groups the rendered reference shows them under (`x-tagGroups`, read by Redoc). A route's `tag` must be one
 * of these; test/rest/openapi.test.ts holds every operation to it.
 */
export const TAGS = [
  {
    name: 'Brands',
    description:
      'A brand is who publishes: a name and its connections to networks. Its queue holds weekly time slots in a time zone, and `queue: true` on a content takes the next free one.',
  },
  {
    name: 'Connections',
    description:
      'A brand’s account on one network. Sandbox connections publish to a local simulation; live ones go through the network’s OAuth consent (start, then the callback) and can be reconnected when their token expires.',
  },
  {
    name: 'Contents',
    description:
      'A post for one or more networks: publish now, schedule with `publish_at`, add to the brand’s queue or keep as a draft. Each target network gets a job; list with `from`/`to` for the calendar, edit, cancel or publish now while it waits, retry failed jobs.',
  },
  {
    name: 'Approvals',
    description:
      'The assistant drafts, a person approves: contents by roles that need approval wait as pending_approval (nothing runs, nothing is charged) until an approver approves them or requests changes; each content keeps a thread of internal comments and approval steps.',
  },
  {
    name: 'Media',
    description: 'Upload an image or a video once and reference its `media_id` in contents. Networks that download media themselves get a signed, expiring address.',
  },
  {
    name: 'Platforms',
    description: 'The networks this service publishes to, with the content types and limits each accepts.',
  },
  {
    name: 'Webhooks',
    description:
      'Endpoints that receive signed events (content.published, content.failed, …). Every delivery and each attempt is kept: list them, read why one failed, send one again; verify a signature here while writing the receiver.',
  },
  {
    name: 'API keys',
    description: 'Keys of the workspace (`svc_live_…`): create one (its secret is shown once), list, revoke. A key acts only on its own workspace.',
  },
  {
    name: 'Members',
    description:
      'People of the workspace with a role (owner, admin, editor, contributor, viewer, client) and optionally some brands; invitations carry a one-time link. A workspace always keeps an owner.',
  },
  {
    name: 'OAuth clients',
    description: 'Confidential clients this workspace registers for the MCP authorization server, with their redirect URIs and secrets.',
  },
  {
    name: 'Audit log',
    description: 'Who changed what in the workspace, when and from where: one entry per change, written with the change, kept for AUDIT_RETENTION (365 days by default). Owners and admins read it.',
  },
  {
    name: 'OAuth',
    description: 'The authorization server for MCP clients (OAuth 2.0 with PKCE, dynamic registration, RFC 8414 and RFC 9728 metadata).',
  },
  {
    name: 'MCP',
    description: 'The Model Context Protocol endpoint: the same operations as tools for assistants, over Streamable HTTP.',
  },
  {
    name: 'Wallet',
    description: 'Credits beyond the plan: prices, the statement of batches and movements, offers with a payment link, and the payment provider’s callback.',
  },
  {
    name: 'Usage',
    description: 'Where the workspace stands on each meter of its plan (brands, connections, contents created and publications this cycle).',
  },
  {
    name: 'Operations',
    description: 'Liveness, readiness and this document: for load balancers, orchestrators and client generators.',
  },
] as const;

export type TagName = (typeof TAGS)[number]['name'];

export const TAG_GROUPS: { name: string; tags: TagName[] }[] = [
  { name: 'Publishing', tags: ['Brands', 'Connections', 'Contents', 'Approvals', 'Media', 'Platforms'] },
  { name: 'Notifications', tags: ['Webhooks'] },
  { name: 'Access', tags: ['API keys', 'Members', 'OAuth clients', 'Audit log', 'OAuth', 'MCP'] },
  { name: 'Billing', tags: ['Wallet', 'Usage'] },
  { name: 'Service', tags: ['Operations'] },
];
