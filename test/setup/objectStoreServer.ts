// The test run's S3 server: one s3rver for every test file (each file makes a bucket of its
// own, test/helpers/objectStore.ts). before.ts starts this as a process of its own, which writes
// its address to objectStoreFile once it listens; after.ts stops it.
//   node --import=./test/setup/typescript.mjs test/setup/objectStoreServer.ts
import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startEmbeddedS3 } from '../../src/storage/embedded.ts';
import { objectStoreFile, testDataDir } from './paths.ts';

const directory = path.join(testDataDir, 's3');
const s3 = await startEmbeddedS3(directory, 'test-bucket');
const partial = `${objectStoreFile}.${process.pid}`;
await writeFile(partial, JSON.stringify({ pid: process.pid, directory, settings: s3.settings }));
await rename(partial, objectStoreFile);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => void s3.stop().finally(() => process.exit(0)));
}
