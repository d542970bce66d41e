import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
/** where the test run keeps its embedded PostgreSQL when DATABASE_URL is not set */
export const testDataDir = path.join(repoRoot, '.tap', 'embedded');
export const databaseUrlFile = path.join(repoRoot, '.tap', 'database-url');
/**
 * The service's command as `npm start` and `npm run admin` run it: the compiled bundle (built by
 * `npm install`, and again by the test run's `before` when a source file changed since).
 */
export const serviceEntry = path.join(repoRoot, 'dist', 'src', 'main.js');
/** the address of the test run's S3 server (test/setup/objectStoreServer.ts) while it runs */
export const objectStoreFile = path.join(repoRoot, '.tap', 'object-store.json');
/** which tap process runs the tests of this checkout (test/setup/runLock.ts) */
export const runLockFile = path.join(repoRoot, '.tap', 'run.lock');
