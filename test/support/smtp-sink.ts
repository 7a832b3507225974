import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message as the sink received it: the envelope, the login that sent it, the raw text and its decoded body. */
export interface ReceivedMail {
  from: string;
  to: string[];
  user: string | undefined;
  raw: string;
  subject: string;
  /** The text part, undone from its transfer encoding. */
  text: string;
}

/** The body of a single-part message, undone from the transfer encoding nodemailer chose for it. */
function decodeBody(raw: string): { subject: string; text: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const subject = /^Subject: (.*)$/m.exec(head)?.[1] ?? '';
  const encoding = /^Content-Transfer-Encoding: (.*)$/im.exec(head)?.[1]?.trim().toLowerCase();
  if (encoding === 'base64') return { subject, text: Buffer.from(body, 'base64').toString('utf8') };
  if (encoding === 'quoted-printable') {
    const bytes = body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return { subject, text: Buffer.from(bytes, 'latin1').toString('utf8') };
  }
  return { subject, text: body };
}

/** The login the sink accepts (`smtp://mailer:s3cret@…`). */
export const SINK_LOGIN = { user: 'mailer', password: 's3cret' } as const;

/** An SMTP sink on a free port: it accepts one login and keeps every message it receives. */
export async function startSmtpSink(): Promise<{ port: number; received: ReceivedMail[]; close(): Promise<void> }> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === SINK_LOGIN.user && auth.password === SINK_LOGIN.password) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        received.push({
          from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          user: typeof session.user === 'string' ? session.user : undefined,
          raw,
          ...decodeBody(raw),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
