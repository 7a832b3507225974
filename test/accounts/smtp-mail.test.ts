import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { testDatabaseKinds } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startSmtpSink } from '../support/smtp-sink.js';


describe('mail over SMTP', () => {
  let sink: Awaited<ReturnType<typeof startSmtpSink>>;
  let server: TestServer;

  beforeAll(async () => {
    sink = await startSmtpSink();
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
