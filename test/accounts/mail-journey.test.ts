import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mailer } from '../../src/core/mail/mailer.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { testDatabaseKinds } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startSmtpSink } from '../support/smtp-sink.js';


/** The path of the first link to `prefix` in a mail's text. */
function linkIn(text: string, prefix: string): string {
  const match = new RegExp(`${prefix.replace(/\//g, '\\/')}[A-Za-z0-9_-]+`).exec(text);
  expect(match, `a ${prefix} link in:\n${text}`).not.toBeNull();
  return match![0];
}

async function signIn(server: TestServer, email: string, password: string): Promise<{ status: number; url: string }> {
  const browser = new DashboardClient(server.url);
  await browser.get('/dashboard/sign-in');
  const page = await browser.post('/dashboard/sign-in', { email, password, next: '/dashboard' });
  return { status: page.status, url: page.url };
}

for (const kind of testDatabaseKinds()) {
  describe(`mail end to end through an SMTP server [${kind.name}]`, () => {
    let sink: Awaited<ReturnType<typeof startSmtpSink>>;
    let server: TestServer;

    beforeAll(async () => {
      sink = await startSmtpSink();
      server = await startTestServer(kind, { SMTP_URL: `smtp://mailer:s3cret@127.0.0.1:${sink.port}`, MAIL_FROM: 'Publisher <no-reply@publisher.test>' }, { workers: false });
    });

    afterAll(async () => {
      await server?.stop();
      await sink?.close();
    });

    it('an invitation arrives by mail, its link makes the member; "forgot password" mails a link that sets a new password once', async () => {
      const ws = await server.workspace('Acme');
      const invited = await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/invitations`, { key: ws.api_key, body: { email: 'rita@example.com', role: 'editor' } });
      expect(invited.status).toBe(201);
      expect(invited.body.mailed).toBe(true);
      expect(sink.received).toHaveLength(1);
      const invitation = sink.received[0]!;
      expect(invitation.to).toEqual(['rita@example.com']);
      expect(invitation.subject).toBe('You are invited to Acme on Publisher');
      const joinPath = linkIn(invitation.text, '/dashboard/join/');
      expect(joinPath).toBe(new URL(invited.body.accept_url as string, 'http://x').pathname);

      const rita = new DashboardClient(server.url);
      expect((await rita.get(joinPath)).html).toContain('Join Acme');
      const joined = await rita.post(joinPath, { as: 'new', password: 'the first password here', name: 'Rita' });
      expect(joined.status).toBe(200);
      expect(joined.html).toContain('you joined the workspace');
      const members = await server.request<{ data: { email: string; role: string }[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/members`, { key: ws.api_key });
      expect(members.body.data).toEqual([expect.objectContaining({ email: 'rita@example.com', role: 'editor' })]);

      const browser = new DashboardClient(server.url);
      await browser.get('/dashboard/forgot-password');
      const asked = await browser.post('/dashboard/forgot-password', { email: 'Rita@Example.com' });
      expect(asked.status).toBe(200);
      expect(textOf(asked.html)).toContain('If an account has this email, a link to set a new password is on its way');
      expect(sink.received).toHaveLength(2);
      const reset = sink.received[1]!;
      expect(reset.to).toEqual(['rita@example.com']);
      expect(reset.subject).toBe('Set a new password');
      const resetPath = linkIn(reset.text, '/dashboard/reset-password/');

      expect((await browser.get(resetPath)).status).toBe(200);
      const set = await browser.post(resetPath, { password: 'the second password here' });
      expect(set.url).toMatch(/\/dashboard\/sign-in\?reason=password_set$/);
      // The link works once.
      expect((await new DashboardClient(server.url).get(resetPath)).status).toBe(404);
      const late = await browser.post(resetPath, { password: 'a third password here' });
      expect(late.status).toBe(404);

      expect((await signIn(server, 'rita@example.com', 'the first password here')).status).toBe(401);
      const signedIn = await signIn(server, 'rita@example.com', 'the second password here');
      expect(signedIn.status).toBe(200);
      expect(new URL(signedIn.url).pathname).toBe('/dashboard');
    });
  });
}

describe('a failing mail server', () => {
  const lines: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
  const failing: Mailer = {
    send: async () => {
      throw new Error('451 the mail server is down');
    },
  };
  let server: TestServer;
  const warnings = () => lines.map((l) => JSON.parse(l) as { msg: string; err?: { message: string } }).filter((l) => l.msg.startsWith('mail:'));

  beforeAll(async () => {
    server = await startTestServer(testDatabaseKinds()[0]!, {}, { workers: false, mailer: failing, logger });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('"forgot password" answers as it does for an unknown email, and the failure is logged', async () => {
    const ws = await server.workspace('Mailless');
    const invited = await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/invitations`, { key: ws.api_key, body: { email: 'ole@example.com', role: 'viewer' } });
    const joinPath = new URL(invited.body.accept_url as string, 'http://x').pathname;
    const ole = new DashboardClient(server.url);
    await ole.get(joinPath);
    expect((await ole.post(joinPath, { as: 'new', password: 'a long enough password' })).status).toBe(200);
    lines.length = 0;

    const browser = new DashboardClient(server.url);
    await browser.get('/dashboard/forgot-password');
    const known = await browser.post('/dashboard/forgot-password', { email: 'ole@example.com' });
    const unknown = await browser.post('/dashboard/forgot-password', { email: 'nobody@example.com' });
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    expect(textOf(known.html)).toBe(textOf(unknown.html));
    expect(textOf(known.html)).toContain('If an account has this email, a link to set a new password is on its way');
    expect(warnings()).toEqual([expect.objectContaining({ msg: 'mail: sending the password reset failed', err: expect.objectContaining({ message: '451 the mail server is down' }) })]);
  });

  it('an invitation is still made; the answer says mailed: false and carries the link, and the failure is logged', async () => {
    const ws = await server.workspace('Mailless too');
    lines.length = 0;
    const invited = await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/invitations`, { key: ws.api_key, body: { email: 'eva@example.com', role: 'viewer' } });
    expect(invited.status).toBe(201);
    expect(invited.body.mailed).toBe(false);
    expect(invited.body.accept_url).toMatch(/\/dashboard\/join\/[A-Za-z0-9_-]+$/);
    expect(warnings()).toEqual([expect.objectContaining({ msg: 'mail: sending the invitation failed' })]);
    const listed = await server.request<{ data: { email: string; status: string }[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/invitations`, { key: ws.api_key });
    expect(listed.body.data).toEqual([expect.objectContaining({ email: 'eva@example.com', status: 'pending' })]);
    // The link the answer carries works.
    const page = await new DashboardClient(server.url).get(new URL(invited.body.accept_url as string, 'http://x').pathname);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Join Mailless too');
  });
});
