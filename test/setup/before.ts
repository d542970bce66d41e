// tap `before`: the compiled service that tests start as operators do (rebuilt when a source
// file changed since the last build), and the test run's PostgreSQL: DATABASE_URL when set (CI may
// point it at a server), otherwise a real embedded one, started once for all test files and
// stopped by after.ts.
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { databaseUrlFile, repoRoot, testDataDir } from './paths.ts';

// in this process: tap follows the node processes a `before` starts and would report the build's
// own coverage (and fail the run for it)
const { buildService } = await import(pathToFileURL(path.join(repoRoot, 'scripts', 'build.mjs')).href);
await buildService({ ifStale: true });

// With DATABASE_URL set this run touches nothing here, so it cannot disturb another run's server.
if (!process.env.DATABASE_URL) {
  await rm(databaseUrlFile, { force: true });
  const db = await startEmbeddedPostgres(testDataDir, (m) => console.error(m));
  await writeFile(databaseUrlFile, db.url);
  console.log(`# embedded PostgreSQL for the tests: ${db.url}`);
}
