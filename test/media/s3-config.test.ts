import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.js';

const S3 = { MEDIA_STORE: 's3', S3_BUCKET: 'media', S3_REGION: 'eu-west-3' };

describe('media store settings', () => {
  it('keeps uploads on local disk unless MEDIA_STORE says s3', () => {
    expect(parseConfig({}).mediaStore).toEqual({ kind: 'local' });
  });

  it('reads the bucket, its server and the keys; the SDK chain finds keys when none are given', () => {
    expect(parseConfig({ ...S3, S3_ENDPOINT: 'http://127.0.0.1:9000/', S3_FORCE_PATH_STYLE: 'true', AWS_ACCESS_KEY_ID: 'id', AWS_SECRET_ACCESS_KEY: 'secret', S3_URL_TTL: '10m' }).mediaStore).toEqual({
      kind: 's3',
      bucket: 'media',
      region: 'eu-west-3',
      endpoint: 'http://127.0.0.1:9000',
      forcePathStyle: true,
      credentials: { accessKeyId: 'id', secretAccessKey: 'secret', sessionToken: undefined },
      urlTtlSeconds: 600,
    });
    expect(parseConfig(S3).mediaStore).toMatchObject({ endpoint: undefined, forcePathStyle: false, credentials: undefined, urlTtlSeconds: 3600 });
  });

  it.each([
    [{ MEDIA_STORE: 'gcs' }, 'MEDIA_STORE'],
    [{ MEDIA_STORE: 's3', S3_REGION: 'eu-west-3' }, 'S3_BUCKET'],
    [{ MEDIA_STORE: 's3', S3_BUCKET: 'media' }, 'S3_REGION'],
    [{ ...S3, S3_ENDPOINT: 'ftp://x' }, 'S3_ENDPOINT'],
    [{ ...S3, AWS_ACCESS_KEY_ID: 'id' }, 'AWS_SECRET_ACCESS_KEY'],
    [{ ...S3, AWS_SECRET_ACCESS_KEY: 'secret' }, 'AWS_ACCESS_KEY_ID'],
    [{ ...S3, S3_URL_TTL: '604801s' }, 'S3_URL_TTL'],
  ])('refuses %j, naming %s', (env, variable) => {
    let error: unknown;
    try {
      parseConfig(env);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
  });
});
