/**
 * Sending mail is optional: with SMTP configured the service mails invitations, verifications and password
 * resets; without it, the same one-time links are shown to the inviter or printed by the CLI. The core sees only
 * this port; the container fills it (or leaves it null).
 */
export interface MailMessage {
  to: string;
  subject: string;
  /** Plain text; links written out in full. */
  text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}
