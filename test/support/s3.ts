import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';

/** The part of s3rver's API the suite uses (the package ships no types). */
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: Server;
}
type S3rverClass = new (options: {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string }[];
}) => S3rverInstance;
// Loaded through require: the package is CommonJS without type declarations.
const S3rver = createRequire(import.meta.url)('@20minutes/s3rver') as S3rverClass;

/** How s3rver names an object's bytes on its disk (`<key>._S3rver_object`). */
const OBJECT_SUFFIX = '._S3rver_object';

/** s3rver's built-in account: it checks every signature against this key pair. */
export const LOCAL_S3_KEY = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface LocalS3 {
  endpoint: string;
  bucket: string;
  /** The service's environment for MEDIA_STORE=s3 on this server. */
  env: Record<string, string>;
  /** The bucket's object keys, sorted (from the server's folder: s3rver's listing rejects the SDK's signature). */
  keys(): string[];
  close(): Promise<void>;
}

/**
 * An S3-compatible server in this process on a free loopback port (s3rver: pure JavaScript, files in a temporary
 * folder, signatures checked), with one empty bucket.
 */
export async function startLocalS3(bucket = 'media-test'): Promise<LocalS3> {
  const directory = mkdtempSync(join(tmpdir(), 'local-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const address = await server.run();
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    endpoint,
    bucket,
    env: {
      MEDIA_STORE: 's3',
      S3_BUCKET: bucket,
      S3_REGION: 'us-east-1',
      S3_ENDPOINT: endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: LOCAL_S3_KEY.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_S3_KEY.secretAccessKey,
    },
    keys() {
      const root = join(directory, bucket);
      return readdirSync(root, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith(OBJECT_SUFFIX))
        .map((f) => f.slice(0, -OBJECT_SUFFIX.length))
        .sort();
    },
    async close() {
      server.httpServer?.closeAllConnections();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
