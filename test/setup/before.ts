// tap `before`: the compiled service that tests start as operators do (rebuilt when a source
// file changed since the last build), the test run's PostgreSQL: DATABASE_URL when set (CI may
// point it at a server), otherwise a real embedded one, and its S3 server; both started once for
// all test files and stopped by after.ts.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { stopObjectStoreServer } from './objectStoreControl.ts';
import { databaseUrlFile, objectStoreFile, repoRoot, testDataDir } from './paths.ts';
import { claimTestRun } from './runLock.ts';

await mkdir(path.dirname(databaseUrlFile), { recursive: true });
await claimTestRun();

// in this process: tap follows the node processes a `before` starts and would report the build's
// own coverage (and fail the run for it)
const { buildService } = await import(
  pathToFileURL(path.join(repoRoot, 'scripts', 'build.mjs')).href
);
await buildService({ ifStale: true });

// With DATABASE_URL set this run touches nothing here, so it cannot disturb another run's server.
if (!process.env.DATABASE_URL) {
  await rm(databaseUrlFile, { force: true });
  const db = await startEmbeddedPostgres(testDataDir, (m) => console.error(m));
  await writeFile(databaseUrlFile, db.url);
  console.log(`# embedded PostgreSQL for the tests: ${db.url}`);
}

// One S3 server for the run, in a process of its own (this one ends before the tests start).
await stopObjectStoreServer(); // one an earlier run left
await rm(path.join(testDataDir, 's3'), { recursive: true, force: true });
await mkdir(testDataDir, { recursive: true });
const server = spawn(
  process.execPath,
  [
    '--import',
    pathToFileURL(path.join(repoRoot, 'test', 'setup', 'typescript.mjs')).href,
    path.join(repoRoot, 'test', 'setup', 'objectStoreServer.ts'),
  ],
  {
    detached: true,
    stdio: 'ignore',
    // not followed by tap's process tracking, which would wait for it
    env: { ...process.env, NODE_OPTIONS: '' },
  },
);
server.unref();
for (let waited = 0; !existsSync(objectStoreFile); waited += 50) {
  if (server.exitCode !== null || waited > 60_000)
    throw new Error(`the test run's S3 server did not start (exit code ${server.exitCode})`);
  await new Promise((r) => setTimeout(r, 50));
}
console.log(`# S3 server for the tests: pid ${server.pid}`);
