import { z } from 'zod';
import { ServiceError } from '../errors.js';

/** Why a key is refused, the same sentence in every door. */
export const IDEMPOTENCY_KEY_RULE = 'must be 1 to 255 printable ASCII characters';

/** The pattern behind `idempotencyKeySchema`. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * What an Idempotency-Key may be (spec 4.3): 1 to 255 printable ASCII characters, so it is stored and compared
 * byte for byte whatever the door. The REST header, the MCP `idempotency_key` and the dashboard's hidden field
 * all validate with this one schema, and `contents.create` checks it again for any other caller.
 */
export const idempotencyKeySchema = z
  .string()
  .regex(IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_KEY_RULE)
  .describe('Unique per logical request (e.g. a UUID); printable ASCII, at most 255 characters.');

/**
 * Checks a key received under the name `field` (`Idempotency-Key` for the REST header, `idempotency_key` in
 * MCP and the dashboard form).
 * @throws ServiceError `validation_failed` naming `field`, when the key is present and malformed.
 */
export function parseIdempotencyKey(key: string | undefined, field: string): string | undefined {
  if (key === undefined || idempotencyKeySchema.safeParse(key).success) return key;
  throw new ServiceError('validation_failed', `${field}: ${IDEMPOTENCY_KEY_RULE}`, {
    fields: [{ path: field, message: IDEMPOTENCY_KEY_RULE }],
  });
}
