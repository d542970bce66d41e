// tap `before`: the compiled service that tests start as operators do (rebuilt when a source
// file changed since the last build), and the test run's PostgreSQL: DATABASE_URL when set (CI may
// point it at a server), otherwise a real embedded one, started once for all test files and
// stopped by after.ts.
import { execFileSync } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { databaseUrlFile, repoRoot, testDataDir } from './paths.ts';

// (not counted by tap's coverage: the build is no test subject)
const { NODE_V8_COVERAGE: _coverage, ...buildEnv } = process.env;
execFileSync(process.execPath, [path.join(repoRoot, 'scripts', 'build.mjs'), '--if-stale'], { stdio: 'inherit', env: buildEnv });

// With DATABASE_URL set this run touches nothing here, so it cannot disturb another run's server.
if (!process.env.DATABASE_URL) {
  await rm(databaseUrlFile, { force: true });
  const db = await startEmbeddedPostgres(testDataDir, (m) => console.error(m));
  await writeFile(databaseUrlFile, db.url);
  console.log(`# embedded PostgreSQL for the tests: ${db.url}`);
}
