// tap `before`: the test run's PostgreSQL. DATABASE_URL when set (CI may point it at a server);
// otherwise a real embedded one, started once for all test files and stopped by after.ts.
import { rm, writeFile } from 'node:fs/promises';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { databaseUrlFile, testDataDir } from './paths.ts';

// With DATABASE_URL set this run touches nothing here, so it cannot disturb another run's server.
if (!process.env.DATABASE_URL) {
  await rm(databaseUrlFile, { force: true });
  const db = await startEmbeddedPostgres(testDataDir, (m) => console.error(m));
  await writeFile(databaseUrlFile, db.url);
  console.log(`# embedded PostgreSQL for the tests: ${db.url}`);
}
