import { z } from 'zod';
import { ROLES } from '../permissions/roles.js';

/** Spec 2.1 and 4.1. */

export const createApiKeyInputSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(100).describe('Label chosen by the caller, e.g. "zapier" or "ci". One key per use.'),
    revoke_others: z
      .boolean()
      .optional()
      .describe('When true, every other key of the workspace is revoked in the same request (atomic rotation).'),
    role: z
      .enum(ROLES)
      .optional()
      .describe('What the key may do (see the role matrix in the README). Default `admin`, everything an API key could always do. Never above the role of the credential creating it.'),
    brand_ids: z
      .array(z.string().min(1))
      .min(1)
      .max(100)
      .optional()
      .describe('Limits the key to these brands of the workspace (it sees nothing of the others). Absent: every brand. Never wider than the brands of the credential creating it.'),
  })
  .meta({ id: 'CreateApiKeyInput' });

export const apiKeySchema = z
  .object({
    id: z.string().describe('Identifier of the key (key_…).'),
    name: z.string(),
    prefix: z.string().describe('The first 8 characters of the key (`svc_live`, the same for every key; see starts_with).'),
    starts_with: z
      .string()
      .nullable()
      .describe('The first 13 characters of the key (`svc_live_` and 4 of its own), to tell keys apart; null for a key created before these were kept.'),
    created_at: z.iso.datetime().describe('ISO 8601 UTC.'),
    last_used_at: z.iso.datetime().nullable().describe('Last authenticated use, to the minute; null if never used.'),
    revoked_at: z.iso.datetime().nullable().describe('When the key was revoked; null while active.'),
    role: z.enum(ROLES).describe('What the key may do (see the role matrix in the README).'),
    brand_ids: z.array(z.string()).nullable().describe('The brands the key is limited to; null for every brand.'),
    created_by: z.string().nullable().describe('Who created the key: an API key id (key_…) or a person id; null for keys the service made (the first key, the CLI).'),
  })
  .meta({ id: 'ApiKey', description: 'An API key as listed; the plaintext is never returned after creation.' });

export const createdApiKeySchema = z
  .object({
    id: z.string(),
    api_key: z
      .string()
      .regex(/^svc_live_[0-9a-f]{32}$/)
      .describe('The plaintext key: svc_live_ + 32 lowercase hex. Returned only in this response; store it now.'),
    name: z.string(),
    prefix: z.string().describe('The first 8 characters of the key.'),
    starts_with: z.string().describe('The first 13 characters of the key (`svc_live_` and 4 of its own), as the key list shows them.'),
    created_at: z.iso.datetime(),
    revoked_other_keys: z.number().int().describe('How many other keys this request revoked (revoke_others).'),
    role: z.enum(ROLES).describe('What the key may do.'),
    brand_ids: z.array(z.string()).nullable().describe('The brands the key is limited to; null for every brand.'),
    created_by: z.string().nullable().describe('Who created the key: an API key id (key_…) or a person id.'),
  })
  .meta({ id: 'CreatedApiKey' });

export const apiKeyListSchema = z.object({ data: z.array(apiKeySchema) }).meta({ id: 'ApiKeyList' });

export type CreateApiKeyInput = z.infer<typeof createApiKeyInputSchema>;
export type ApiKey = z.infer<typeof apiKeySchema>;
export type CreatedApiKey = z.infer<typeof createdApiKeySchema>;
export type ApiKeyList = z.infer<typeof apiKeyListSchema>;
