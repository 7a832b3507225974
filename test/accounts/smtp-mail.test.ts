import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { testDatabaseKinds } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface Received {
  from: string;
  to: string[];
  user: string | undefined;
  raw: string;
}

/** An SMTP sink on a free port: it accepts one login and keeps every message it receives. */
async function startSink(): Promise<{ port: number; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === 'mailer' && auth.password === 's3cret') callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          user: typeof session.user === 'string' ? session.user : undefined,
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('mail over SMTP', () => {
  let sink: Awaited<ReturnType<typeof startSink>>;
  let server: TestServer;

  beforeAll(async () => {
    sink = await startSink();
    server = await startTestServer(testDatabaseKinds()[0]!, { SMTP_URL: `smtp://mailer:s3cret@127.0.0.1:${sink.port}`, MAIL_FROM: 'Publisher <no-reply@publisher.test>' }, { workers: false });
  });

  afterAll(async () => {
    await server?.stop();
    await sink?.close();
  });

  it("a message sent through the container's mailer arrives with its sender, recipient, subject and text, after logging in", async () => {
    const mailer = server.container.mailer;
    expect(mailer).not.toBeNull();
    await mailer!.send({ to: 'ana@example.com', subject: 'You are invited to Acme', text: 'Open this link to join: https://publisher.test/dashboard/invitations/abc' });
    expect(sink.received).toHaveLength(1);
    const [message] = sink.received;
    expect(message!.user).toBe('mailer');
    expect(message!.from).toBe('no-reply@publisher.test');
    expect(message!.to).toEqual(['ana@example.com']);
    expect(message!.raw).toMatch(/^Subject: You are invited to Acme\r?$/m);
    expect(message!.raw).toMatch(/^From: Publisher <no-reply@publisher\.test>\r?$/m);
    expect(message!.raw).toContain('https://publisher.test/dashboard/invitations/abc');
  });

  it('a refusal by the server rejects the send, so the caller can show the link instead', async () => {
    const config = parseConfig({ DATABASE_URL: 'sqlite:./unused.db', SMTP_URL: `smtp://mailer:wrong@127.0.0.1:${sink.port}`, MAIL_FROM: 'no-reply@publisher.test' });
    const { createSmtpMailer } = await import('../../src/mail/smtp-mailer.js');
    const mailer = createSmtpMailer(config.mail!);
    await expect(mailer.send({ to: 'ana@example.com', subject: 'x', text: 'y' })).rejects.toThrow(/Invalid username or password/);
    mailer.close();
  });
});

describe('mail settings', () => {
  it('without SMTP_URL there is no mailer; SMTP_URL needs MAIL_FROM and an smtp URL', () => {
    expect(parseConfig({}).mail).toBeNull();
    expect(() => parseConfig({ SMTP_URL: 'smtp://host:587' })).toThrow(/MAIL_FROM is required with SMTP_URL/);
    expect(() => parseConfig({ SMTP_URL: 'http://host', MAIL_FROM: 'a@b.c' })).toThrow(/SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL/);
    expect(parseConfig({ SMTP_URL: 'smtps://u:p@host:465', MAIL_FROM: 'a@b.c' }).mail).toEqual({ smtpUrl: 'smtps://u:p@host:465', from: 'a@b.c' });
  });
});
