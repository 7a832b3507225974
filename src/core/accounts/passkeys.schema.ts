import { z } from 'zod';

/** The name a person gives a passkey, to tell their devices apart in the list ("Work laptop", "Phone"). */
export const passkeyName = z.string().trim().min(1, { message: 'must not be empty' }).max(60, { message: 'must be at most 60 characters' }).describe('A name to tell the passkey apart, such as "Work laptop".');

/**
 * What the browser's WebAuthn call returned, as `@simplewebauthn/browser` serialises it (base64url fields). Only
 * its outline is checked here; the WebAuthn verification checks every byte.
 */
const credentialJson = z.object({
  id: z.string().min(1).max(1400),
  rawId: z.string().min(1).max(1400),
  type: z.literal('public-key'),
  clientExtensionResults: z.record(z.string(), z.unknown()),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
});

export const registrationResponse = credentialJson.extend({
  response: z.object({
    clientDataJSON: z.string().min(1),
    attestationObject: z.string().min(1),
    transports: z.array(z.string()).optional(),
  }),
});

export const authenticationResponse = credentialJson.extend({
  response: z.object({
    clientDataJSON: z.string().min(1),
    authenticatorData: z.string().min(1),
    signature: z.string().min(1),
    userHandle: z.string().optional(),
  }),
});
