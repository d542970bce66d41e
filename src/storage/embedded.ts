// The embedded default object store: a real S3-compatible server (s3rver) on loopback, with
// its data under DATA_DIR/s3. The program talks S3 to it exactly as to any other endpoint.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import S3rver from 's3rver';
import type { S3Settings } from '../config.ts';

export interface EmbeddedObjectStore {
  settings: S3Settings;
  stop(): Promise<void>;
}

/** s3rver's built-in account. */
const ACCESS_KEY = 'S3RVER';

export async function startEmbeddedS3(dir: string, bucket: string, port = 0): Promise<EmbeddedObjectStore> {
  await mkdir(dir, { recursive: true });
  const server = new S3rver({
    address: '127.0.0.1',
    port,
    directory: path.resolve(dir),
    silent: true,
    vhostBuckets: false,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const address = (await server.run()) as { port: number };
  return {
    settings: {
      endpoint: `http://127.0.0.1:${address.port}`,
      bucket,
      region: 'us-east-1',
      accessKeyId: ACCESS_KEY,
      secretAccessKey: ACCESS_KEY,
      forcePathStyle: true,
    },
    async stop() {
      await server.close();
    },
  };
}
