// The test run's S3 server (test/setup/objectStoreServer.ts) as the other processes of the run
// find it: test files make their buckets on it, after.ts stops it at the end of a run, before.ts
// one an interrupted run left.
import { existsSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { S3Settings } from '../../src/config.ts';
import { objectStoreFile } from './paths.ts';

export interface ObjectStoreServer {
  pid: number;
  /** s3rver's directory: a bucket is a folder of it */
  directory: string;
  settings: S3Settings;
}

/** The server while it runs (its process checked, not only its file: a pid can be reused). */
export function runningObjectStoreServer(): ObjectStoreServer | undefined {
  if (!existsSync(objectStoreFile)) return undefined;
  const server = JSON.parse(readFileSync(objectStoreFile, 'utf8')) as ObjectStoreServer;
  const cmdline = `/proc/${server.pid}/cmdline`;
  try {
    if (existsSync('/proc/self/cmdline'))
      return readFileSync(cmdline, 'utf8').includes('objectStoreServer') ? server : undefined;
    process.kill(server.pid, 0);
    return server;
  } catch {
    return undefined;
  }
}

export async function stopObjectStoreServer(): Promise<void> {
  const server = runningObjectStoreServer();
  await rm(objectStoreFile, { force: true });
  if (!server) return;
  try {
    process.kill(server.pid, 'SIGTERM');
    for (let i = 0; i < 100; i++) {
      await new Promise((r) => setTimeout(r, 50));
      process.kill(server.pid, 0);
    }
    process.kill(server.pid, 'SIGKILL');
  } catch {
    // gone
  }
}
