// The object store of a test file, at either depth: a bucket of its own on the test run's S3
// server (test/setup/objectStoreServer.ts, started by `npm test`), or, when the file runs without
// it, an S3 server of its own under the file's data directory.
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { EmbeddedObjectStore } from '../../src/storage/embedded.ts';
import { runningObjectStoreServer } from '../setup/objectStoreControl.ts';

/** Settings of an S3 bucket for this file alone (created by the service's ensureBucket); stop() removes it. */
export async function testObjectStore(dataDir: string): Promise<EmbeddedObjectStore> {
  const shared = runningObjectStoreServer();
  if (!shared) {
    // s3rver is loaded only here: half a second of CPU that the files of `npm test` do not spend
    const { startEmbeddedS3 } = await import('../../src/storage/embedded.ts');
    return startEmbeddedS3(path.join(dataDir, 's3'), 'test-bucket');
  }
  const bucket = `test-${randomBytes(6).toString('hex')}`;
  return {
    settings: { ...shared.settings, bucket },
    async stop() {
      await rm(path.join(shared.directory, bucket), { recursive: true, force: true });
    },
  };
}
