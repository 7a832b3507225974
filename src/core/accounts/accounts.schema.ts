import { z } from 'zod';
import { ROLES } from '../permissions/roles.js';
import { PASSWORD_LENGTH } from './password.js';

/** A person's email address as they type it; compared lowercased. */
export const emailSchema = z.string().trim().min(3).max(254).email({ message: 'must be an email address (name@example.com)' }).describe("The person's email address.");

/** A new password: length only (NIST SP 800-63B), no composition rules. */
export const newPasswordSchema = z
  .string()
  .min(PASSWORD_LENGTH.min, { message: `must be at least ${PASSWORD_LENGTH.min} characters` })
  .max(PASSWORD_LENGTH.max, { message: `must be at most ${PASSWORD_LENGTH.max} characters` })
  .describe(`A new password of ${PASSWORD_LENGTH.min} to ${PASSWORD_LENGTH.max} characters.`);

/** A password presented to sign in: any length up to a bound, so a long paste is refused before hashing. */
export const presentedPasswordSchema = z.string().max(1024);

/** A 6-digit authenticator code or a recovery code (`xxxxx-xxxxx`). */
export const secondFactorCodeSchema = z.string().trim().min(6).max(20).describe('The 6-digit code of the authenticator app, or a recovery code.');

/** `cli user create`: a person, their workspace and role. */
export const createUserInputSchema = z.object({
  email: emailSchema,
  workspace_id: z.string().min(1).max(100),
  role: z.enum(ROLES),
});
export type CreateUserInput = z.infer<typeof createUserInputSchema>;
