import nodemailer from 'nodemailer';
import type { Mailer, MailMessage } from '../core/mail/mailer.js';

/**
 * The core's `Mailer` port over SMTP (nodemailer). One pooled transport per process; `smtp://` upgrades with
 * STARTTLS when the server offers it, `smtps://` speaks TLS from the first byte. A refusal by the server rejects
 * `send` (the caller decides whether to show the link instead).
 */
export function createSmtpMailer(settings: { smtpUrl: string; from: string }): Mailer & { close(): void } {
  const transport = nodemailer.createTransport(settings.smtpUrl);
  return {
    async send(message: MailMessage): Promise<void> {
      await transport.sendMail({ from: settings.from, to: message.to, subject: message.subject, text: message.text });
    },
    close: () => transport.close(),
  };
}
