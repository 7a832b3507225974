import { parseArgs } from 'node:util';
import type { Kysely } from 'kysely';
import { connect } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import { ConfigError, loadConfig } from './config.js';
import { createContainer } from './container.js';
import { createLogger } from './observability/logger.js';
import { ServiceError } from './core/errors.js';
import { createWorkspaceInputSchema } from './core/workspaces/workspaces.schema.js';

const USAGE = `Usage: npm run cli -- <command>

Commands:
  migrate                                   bring the database schema up to date
  workspace list [--json]                   every workspace: id, name, plan, created
  workspace create --name NAME [--json]     create a workspace and its first API key (shown once)
  workspace plan --workspace WS --plan PLAN put a workspace on a plan (see PLANS_JSON)
  key create --workspace WS [--name NAME] [--json]
                                            another API key for a workspace (shown once), e.g. when one is lost
  credits grant --workspace WS --amount N [--expires ISO_DATE] [--source grant|promotion]
                                            add a credit batch (lote) to a workspace's wallet
  user create EMAIL --workspace WS --role ROLE [--json]
                                            a person joins a workspace (owner, admin, editor, contributor,
                                            viewer or client); prints a one-time link to set their password
  user reset-password EMAIL [--json]        a one-time link (one hour) to set a new password; ends every session
`;

/** Left-aligned columns, two spaces apart, for people reading a terminal (`--json` is for scripts). */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [header, ...rows].map((r) => r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()).join('\n') + '\n';
}

/** Runs `work` with a container, closes it, and turns an expected failure into one line and exit code 1. */
async function withContainer(config: ReturnType<typeof loadConfig>, work: (container: Awaited<ReturnType<typeof createContainer>>) => Promise<string>): Promise<number> {
  const container = await createContainer(config, { logger: createLogger('warn', process.stderr) });
  try {
    process.stdout.write(await work(container));
    return 0;
  } catch (err) {
    if (err instanceof ServiceError) {
      process.stderr.write(`${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    await container.close();
  }
}

/** Operator commands. Exit codes: 0 done, 1 failed, 2 bad usage or configuration. */
async function run(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { role: { type: 'string' }, name: { type: 'string' }, workspace: { type: 'string' }, plan: { type: 'string' }, amount: { type: 'string' }, expires: { type: 'string' }, source: { type: 'string' }, json: { type: 'boolean', default: false }, help: { type: 'boolean', default: false } },
  });
  // `user …` commands take the person's email as their last word.
  const isUser = positionals[0] === 'user';
  const command = (isUser ? positionals.slice(0, 2) : positionals).join(' ');
  const email = isUser ? positionals[2] : undefined;
  if (values.help || command === '' || command === 'help') {
    process.stdout.write(USAGE);
    return values.help || command === 'help' ? 0 : 2;
  }
  const config = loadConfig();

  if (command === 'migrate') {
    const db = connect(config.database);
    try {
      const result = await migrateToLatest(db.kysely as unknown as Kysely<unknown>, db.dialect);
      const applied = (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
      process.stdout.write(applied.length === 0 ? 'Schema already up to date.\n' : `Applied: ${applied.join(', ')}\n`);
      return 0;
    } finally {
      await db.close();
    }
  }

  if (command === 'workspace list') {
    return withContainer(config, async (container) => {
      const workspaces = await container.services.workspaces.list();
      if (values.json) return `${JSON.stringify({ data: workspaces })}\n`;
      if (workspaces.length === 0) return 'No workspace yet. Create one: npm run cli -- workspace create --name NAME\n';
      return table(['ID', 'NAME', 'PLAN', 'CREATED'], workspaces.map((w) => [w.id, w.name, w.plan, w.created_at]));
    });
  }

  if (command === 'key create') {
    const name = values.name ?? 'cli key';
    if (values.workspace === undefined || name.trim().length === 0 || name.length > 100) {
      process.stderr.write('key create needs --workspace WS (see: npm run cli -- workspace list) and takes --name NAME (1 to 100 characters)\n');
      return 2;
    }
    const workspace = values.workspace;
    return withContainer(config, async (container) => {
      const created = await container.services.workspaces.createKey(workspace, name.trim());
      if (values.json) return `${JSON.stringify({ workspace_id: created.workspace_id, key_id: created.key_id, api_key: created.api_key })}\n`;
      return [
        `API key ${created.key_id} for workspace ${created.workspace_id} (${created.workspace_name}), shown only now; store it:`,
        `  ${created.api_key}`,
        'Paste into your shell to use it:',
        `  export KEY=${created.api_key} WS=${created.workspace_id}`,
        '',
      ].join('\n');
    });
  }

  if (command === 'workspace create') {
    const input = createWorkspaceInputSchema.safeParse({ name: values.name });
    if (!input.success) {
      process.stderr.write('workspace create needs --name NAME (1 to 100 characters)\n');
      return 2;
    }
    return withContainer(config, async (container) => {
      const created = await container.services.workspaces.create(input.data);
      return values.json
        ? `${JSON.stringify(created)}\n`
        : `Workspace ${created.workspace_id}\nAPI key ${created.key_id} (shown only now; store it):\n  ${created.api_key}\n`;
    });
  }

  if (command === 'workspace plan') {
    if (values.workspace === undefined || values.plan === undefined) {
      process.stderr.write('workspace plan needs --workspace WS --plan PLAN\n');
      return 2;
    }
    const { workspace, plan } = values;
    return withContainer(config, async (container) => {
      await container.services.workspaces.setPlan(workspace, plan);
      return `Workspace ${workspace} is on plan ${plan}.\n`;
    });
  }

  if (command === 'credits grant') {
    const amount = Number(values.amount);
    const expiresAt = values.expires === undefined ? null : Date.parse(values.expires);
    const source = values.source ?? 'grant';
    if (values.workspace === undefined || !Number.isSafeInteger(amount) || amount <= 0 || Number.isNaN(expiresAt) || (source !== 'grant' && source !== 'promotion')) {
      process.stderr.write('credits grant needs --workspace WS --amount <positive integer> [--expires <ISO date>] [--source grant|promotion]\n');
      return 2;
    }
    const workspace = values.workspace;
    return withContainer(config, async (container) => {
      const granted = await container.services.wallet.grant({ workspaceId: workspace, amount, source, expiresAt });
      return values.json ? `${JSON.stringify({ batch_id: granted?.batchId, amount })}\n` : `Added ${amount} credits to ${workspace} (batch ${granted?.batchId}).\n`;
    });
  }

  if (command === 'user create') {
    if (email === undefined || values.workspace === undefined || values.role === undefined) {
      process.stderr.write('user create needs EMAIL --workspace WS --role ROLE (owner, admin, editor, contributor, viewer, client)\n');
      return 2;
    }
    const input = { email, workspace_id: values.workspace, role: values.role };
    return withContainer(config, async (container) => {
      const made = await container.services.accounts.createUser(input);
      if (values.json) return `${JSON.stringify({ user_id: made.userId, created: made.created, link: made.link })}\n`;
      return [
        `${made.created ? 'Created' : 'Added'} ${email} (${made.userId}) as ${values.role} of ${values.workspace}.`,
        'Give them this one-time link to set their password (it works once, for an hour):',
        `  ${made.link}`,
        '',
      ].join('\n');
    });
  }

  if (command === 'user reset-password') {
    if (email === undefined) {
      process.stderr.write('user reset-password needs EMAIL\n');
      return 2;
    }
    return withContainer(config, async (container) => {
      const { link, userId } = await container.services.accounts.resetLinkFor(email);
      if (values.json) return `${JSON.stringify({ user_id: userId, link })}\n`;
      return [`A one-time link for ${email} to set a new password (it works once, for an hour; setting it ends every session):`, `  ${link}`, ''].join('\n');
    });
  }

  process.stderr.write(`Unknown command: ${command}\n${USAGE}`);
  return 2;
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS') ? 2 : 1);
  },
);
