// The configuration of a test file's service, at either depth (test/helpers/server.ts over HTTP,
// test/helpers/handler.ts in process): its own database, data directory and object store.
import { loadConfig, type Config } from '../../src/config.ts';
import type { EmbeddedObjectStore } from '../../src/storage/embedded.ts';

export function testConfig(opts: {
  databaseUrl: string;
  dataDir: string;
  /** an S3 server of its own; none: the embedded default store, reached at `port` */
  s3: EmbeddedObjectStore | undefined;
  port: number;
  env: Record<string, string> | undefined;
}): Config {
  const { s3, port } = opts;
  const store: Record<string, string> = s3
    ? {
        S3_ENDPOINT: s3.settings.endpoint,
        S3_BUCKET: s3.settings.bucket,
        S3_ACCESS_KEY_ID: s3.settings.accessKeyId,
        S3_SECRET_ACCESS_KEY: s3.settings.secretAccessKey,
      }
    : { PUBLIC_URL: `http://127.0.0.1:${port}` };
  return loadConfig({
    DATABASE_URL: opts.databaseUrl,
    DATABASE_POOL_SIZE: '5',
    ...store,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: opts.dataDir,
    // TEST_LOG_LEVEL=error shows a failing test's server errors (procedure failed, with the cause)
    LOG_LEVEL: (process.env.TEST_LOG_LEVEL as 'silent' | undefined) ?? 'silent',
    DEMO_BOOTSTRAP: 'false',
    WORKER_POLL_INTERVAL_MS: '100',
    // a synchronous cube answer waits up to 25 s by default: a test's first query (which builds
    // the organization's analytics database) can take that long when six files share two busy
    // cores, so tests give it 60 s (the files about the window set their own)
    CUBE_SYNC_TIMEOUT_MS: '60000',
    // most test servers never ingest: no threads kept warm unless a test asks
    THREADS_WARM: '0',
    NODE_ENV: 'test',
    // every test file's callers share one address (127.0.0.1), and sweeps call the limited
    // procedures by the hundred: budgets that count every call but refuse none, unless a test
    // about rate limits sets its own (test/trpc/rateLimit.test.ts)
    ...Object.fromEntries(
      ['URLS', 'SQL', 'CUBE', 'EXPORTS', 'INVITATIONS', 'PROVIDERS'].map((g) => [
        `RATE_LIMIT_${g}`,
        '1000000',
      ]),
    ),
    ...opts.env,
  });
}
