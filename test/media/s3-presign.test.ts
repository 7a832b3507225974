import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { describe, expect, it } from 'vitest';
import { presignGetObject } from '../../src/media/s3-presign.js';

const NOW = Date.UTC(2026, 10, 23, 6, 30, 12, 345);
const KEY = 'media/media_ab c!(*)é';

describe('signed GET addresses of bucket objects', () => {
  it.each([
    { name: 'AWS, virtual-hosted', endpoint: undefined, forcePathStyle: false, sessionToken: undefined },
    { name: 'S3-compatible server, path style, session token', endpoint: 'http://127.0.0.1:4569', forcePathStyle: true, sessionToken: 'tok/en+=' },
    { name: 'S3-compatible server under a path, virtual-hosted', endpoint: 'http://localhost:9000/base', forcePathStyle: false, sessionToken: undefined },
  ])('are the very addresses the SDK presigner gives ($name)', async ({ endpoint, forcePathStyle, sessionToken }) => {
    const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalr/K7MDENG+bPxRfiCY', sessionToken };
    const client = new S3Client({
      region: 'eu-west-3',
      endpoint,
      forcePathStyle,
      credentials,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    const sdk = await getSignedUrl(client, new GetObjectCommand({ Bucket: 'my-bucket', Key: KEY }), { expiresIn: 900, signingDate: new Date(NOW) });
    client.destroy();
    expect(presignGetObject({ bucket: 'my-bucket', region: 'eu-west-3', endpoint, forcePathStyle }, credentials, KEY, NOW, 900)).toBe(sdk);
  });

  it('never asks for more than the week S3 allows', () => {
    const url = new URL(presignGetObject({ bucket: 'b', region: 'us-east-1', endpoint: undefined, forcePathStyle: false }, { accessKeyId: 'a', secretAccessKey: 's' }, 'k', NOW, 30 * 86_400));
    expect(url.searchParams.get('X-Amz-Expires')).toBe('604800');
  });
});
