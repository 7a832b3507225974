import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

/**
 * The request bodies this service sends to X, as X's official OpenAPI describes them (docs.x.com, API v2
 * "latest-openapi.json", 2.16x; the same enums are in X's generated SDK, xdevplatform/xdk): a vendored subset,
 * so the fake refuses what X's description does not allow instead of what the fake's author remembered.
 * Only the schemas and fields the adapter uses are copied; the rest of each request is left open.
 */
const MEDIA_ID = { type: 'string', pattern: '^[0-9]{1,19}$' };
const TWEET_ID = { type: 'string', pattern: '^[0-9]{1,19}$' };

const SCHEMAS = {
  /** POST /2/tweets, application/json. */
  TweetCreateRequest: {
    type: 'object',
    properties: {
      text: { type: 'string' },
      media: {
        type: 'object',
        required: ['media_ids'],
        properties: { media_ids: { type: 'array', minItems: 1, maxItems: 4, items: MEDIA_ID }, tagged_user_ids: { type: 'array', maxItems: 10 } },
        additionalProperties: false,
      },
      reply: {
        type: 'object',
        required: ['in_reply_to_tweet_id'],
        properties: { in_reply_to_tweet_id: TWEET_ID, exclude_reply_user_ids: { type: 'array' }, auto_populate_reply_metadata: { type: 'boolean' } },
        additionalProperties: false,
      },
      quote_tweet_id: TWEET_ID,
    },
  },
  /** POST /2/media/upload/initialize, application/json. */
  MediaUploadConfigRequest: {
    type: 'object',
    properties: {
      additional_owners: { type: 'array', items: { type: 'string', pattern: '^[0-9]{1,19}$' } },
      media_category: { type: 'string', enum: ['amplify_video', 'tweet_gif', 'tweet_image', 'tweet_video', 'dm_gif', 'dm_image', 'dm_video', 'subtitles'] },
      media_type: {
        type: 'string',
        enum: ['video/mp4', 'video/webm', 'video/mp2t', 'video/quicktime', 'text/srt', 'text/vtt', 'image/jpeg', 'image/gif', 'image/bmp', 'image/png', 'image/webp', 'image/pjpeg', 'image/tiff', 'model/gltf-binary', 'model/vnd.usdz+zip'],
      },
      shared: { type: 'boolean' },
      total_bytes: { type: 'integer', minimum: 0 },
    },
  },
  /** POST /2/media/upload, multipart/form-data (the form's text fields; `media` is the file). */
  MediaUploadRequestOneShot: {
    type: 'object',
    required: ['media_category'],
    properties: {
      media_category: { type: 'string', enum: ['tweet_image', 'dm_image', 'subtitles'] },
      media_type: { type: 'string', enum: ['text/srt', 'text/vtt', 'image/jpeg', 'image/bmp', 'image/png', 'image/webp', 'image/pjpeg', 'image/tiff'] },
      shared: { type: 'string' },
    },
  },
} as const;

export type XRequestSchema = keyof typeof SCHEMAS;

const ajv = new Ajv2020({ allErrors: true, strict: false });
const validators = new Map<XRequestSchema, ValidateFunction>(Object.entries(SCHEMAS).map(([name, schema]) => [name as XRequestSchema, ajv.compile(schema)]));

/** The ways `body` breaks X's description of `schema` (empty when it holds). */
export function xSchemaViolations(schema: XRequestSchema, body: unknown): string[] {
  const validate = validators.get(schema)!;
  if (validate(body)) return [];
  return (validate.errors ?? []).map((e) => `${schema}${e.instancePath} ${e.message ?? 'is invalid'}${e.params && 'allowedValues' in e.params ? ` (${(e.params.allowedValues as unknown[]).join(', ')})` : ''}`);
}
