import t from 'tap';
import { ConfigError, loadConfig } from '../src/config.ts';

t.test('defaults: embedded database and object store, port 3000 on loopback', async (t) => {
  const c = loadConfig({});
  t.equal(c.port, 3000);
  t.equal(c.host, '127.0.0.1');
  t.equal(c.databaseUrl, undefined);
  t.equal(c.s3, undefined);
  t.match(c.dataDir, /\/data$/);
  t.equal(c.logLevel, 'info');
});

t.test('configured servers are used instead, each independently', async (t) => {
  const c = loadConfig({
    DATABASE_URL: 'postgres://u:p@db:5432/royalty',
    S3_ENDPOINT: 'http://minio:9000',
    S3_BUCKET: 'bkt',
    S3_ACCESS_KEY_ID: 'k',
    S3_SECRET_ACCESS_KEY: 's',
  });
  t.equal(c.databaseUrl, 'postgres://u:p@db:5432/royalty');
  t.same(c.s3, {
    endpoint: 'http://minio:9000',
    bucket: 'bkt',
    region: 'us-east-1',
    accessKeyId: 'k',
    secretAccessKey: 's',
    forcePathStyle: true,
  });
  t.equal(loadConfig({ DATABASE_URL: 'postgres://x/y' }).s3, undefined);
});

t.test('bad values fail fast naming the variable', async (t) => {
  t.throws(() => loadConfig({ PORT: 'eighty' }), ConfigError);
  t.throws(() => loadConfig({ PORT: '70000' }), /PORT/);
  t.throws(
    () => loadConfig({ S3_ENDPOINT: 'http://x' }),
    /S3_BUCKET, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY/,
  );
  t.throws(() => loadConfig({ LOG_LEVEL: 'loud' }), /LOG_LEVEL/);
  t.throws(() => loadConfig({ DATABASE_URL: 'not a url' }), /DATABASE_URL/);
  // numbers are decimal digits: not hexadecimal, exponents or fractions that happen to be whole
  for (const bad of ['0x10', '1e3', '2.0', 'Infinity'])
    t.throws(
      () => loadConfig({ WORKER_CONCURRENCY: bad }),
      /WORKER_CONCURRENCY: must be a whole number/,
      bad,
    );
  t.equal(loadConfig({ DATABASE_POOL_SIZE: ' 5 ' }).databasePoolSize, 5);
  // a schedule the job runner would refuse once everything else had started
  t.throws(
    () => loadConfig({ FX_RATES_CRON: '99 17 * * 1-5' }),
    /FX_RATES_CRON: Too large value '99' in minutes range/,
  );
  t.throws(
    () => loadConfig({ FX_RATES_CRON: '0 17 * * mon-fri' }),
    /FX_RATES_CRON: must be five cron fields/,
  );
  t.equal(
    loadConfig({ FX_RATES_CRON: '*/30 6-18 * * 1,3,5' }).fxImport.cron,
    '*/30 6-18 * * 1,3,5',
  );
  // how long a completed export keeps its files: whole hours, 1 to 10 years' worth
  t.equal(loadConfig({}).exports.retentionHours, 168);
  t.equal(loadConfig({ EXPORT_RETENTION_HOURS: '24' }).exports.retentionHours, 24);
  for (const bad of ['0', '-1', '1.5', '87601'])
    t.throws(() => loadConfig({ EXPORT_RETENTION_HOURS: bad }), /EXPORT_RETENTION_HOURS/, bad);
});

t.test('an empty value means unset: PORT= is the default port, not a random one', async (t) => {
  t.equal(loadConfig({ PORT: '' }).port, 3000);
  t.equal(loadConfig({ PORT: '  ' }).port, 3000);
  t.equal(loadConfig({ PORT: '0' }).port, 0, 'an explicit 0 still asks for a free port');
  const c = loadConfig({
    HOST: '',
    DATA_DIR: '',
    DATABASE_URL: '',
    WORKER_CONCURRENCY: '',
    THREADS_IDLE_TIMEOUT_MS: '',
    S3_ENDPOINT: '',
  });
  t.equal(c.host, '127.0.0.1');
  t.match(c.dataDir, /\/data$/);
  t.equal(c.databaseUrl, undefined, 'the embedded database');
  t.equal(c.worker.concurrency, 4);
  t.equal(c.threads.idleTimeoutMs, 30_000);
  t.equal(c.s3, undefined);
  // documented exceptions: empty means no scheduled exchange-rate import
  t.same(loadConfig({ FX_RATES_URL: '' }).fxImport, { url: '', cron: '0 17 * * 1-5' });
  t.same(loadConfig({ FX_RATES_CRON: '' }).fxImport.cron, '');
});

t.test('DATABASE_URL: postgres:// and postgresql:// URLs only', async (t) => {
  t.equal(
    loadConfig({ DATABASE_URL: 'postgresql://u:p@db/royalty?sslmode=require' }).databaseUrl,
    'postgresql://u:p@db/royalty?sslmode=require',
  );
  t.equal(
    loadConfig({ DATABASE_URL: 'postgres:///royalty?host=/var/run/postgresql' }).databaseUrl,
    'postgres:///royalty?host=/var/run/postgresql',
    'a socket directory',
  );
  for (const bad of [
    'http://x',
    'https://db:5432/royalty',
    'mysql://db/royalty',
    'db:5432/royalty',
  ]) {
    t.throws(
      () => loadConfig({ DATABASE_URL: bad }),
      /DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/,
      bad,
    );
  }
});

t.test('the program stops at start naming the variable, without a stack trace', async (t) => {
  const { spawnSync } = await import('node:child_process');
  const { repoRoot, serviceEntry } = await import('./setup/paths.ts');
  const run = (env: Record<string, string>) =>
    spawnSync(process.execPath, [serviceEntry, 'migrate'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH, ...env },
      encoding: 'utf8',
    });
  const bad = run({ DATABASE_URL: 'http://x' });
  t.equal(bad.status, 1);
  t.match(bad.stderr, /DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/);
  t.notMatch(bad.stderr, /\n\s+at /, 'no stack trace');
  const port = run({ PORT: 'eighty', DATABASE_URL: 'postgres://x/y' });
  t.equal(port.status, 1);
  t.match(port.stderr, /^Invalid configuration:\n\s+PORT:/);
});

t.test(
  'every address, name and header value is checked at start, naming its variable',
  async (t) => {
    const s3 = {
      S3_ENDPOINT: 'http://minio:9000',
      S3_BUCKET: 'royalty-data',
      S3_ACCESS_KEY_ID: 'k',
      S3_SECRET_ACCESS_KEY: 's',
    };
    const cases: [Record<string, string>, string][] = [
      [
        { HOST: 'not a host!' },
        'HOST: must be an IP address (127.0.0.1, 0.0.0.0, ::) or a host name',
      ],
      [
        { HOST: 'http://127.0.0.1' },
        'HOST: must be an IP address (127.0.0.1, 0.0.0.0, ::) or a host name',
      ],
      // links and request bases: only http(s)
      [{ PUBLIC_URL: 'javascript:alert(1)' }, 'PUBLIC_URL: must be an http:// or https:// URL'],
      [{ PUBLIC_URL: 'ftp://files.example' }, 'PUBLIC_URL: must be an http:// or https:// URL'],
      [
        { ...s3, S3_ENDPOINT: 'mailto:ops@example.com' },
        'S3_ENDPOINT: must be an http:// or https:// URL',
      ],
      [{ AI_BASE_URL: 'file:///etc/passwd' }, 'AI_BASE_URL: must be an http:// or https:// URL'],
      [{ MARKET_BASE_URL: 'data:,x' }, 'MARKET_BASE_URL: must be an http:// or https:// URL'],
      [
        { TREASURY_BASE_URL: 'gopher://treasury.example' },
        'TREASURY_BASE_URL: must be an http:// or https:// URL',
      ],
      [
        { MUSICBRAINZ_URL: 'ftp://musicbrainz.example' },
        'MUSICBRAINZ_URL: must be an http:// or https:// URL',
      ],
      [
        { FX_RATES_URL: 'ftp://rates.example/eurofxref.zip' },
        'FX_RATES_URL: must be an http:// or https:// URL, or empty for no scheduled import',
      ],
      [
        { ...s3, S3_BUCKET: 'my bucket' },
        'S3_BUCKET: must be a bucket name (3 to 63 lower-case letters, digits, dots and hyphens)',
      ],
      [
        { ...s3, S3_BUCKET: 'a/b' },
        'S3_BUCKET: must be a bucket name (3 to 63 lower-case letters, digits, dots and hyphens)',
      ],
      [
        { ...s3, S3_BUCKET: 'b' },
        'S3_BUCKET: must be a bucket name (3 to 63 lower-case letters, digits, dots and hyphens)',
      ],
      [{ S3_REGION: 'us east 1' }, 'S3_REGION: must be a region name (us-east-1)'],
      // a line break pasted with a key fails every request later
      [
        { AI_API_KEY: 'sk-abc\n' + 'def' },
        'AI_API_KEY: must not hold control characters (a line break?)',
      ],
      [
        { ...s3, S3_ACCESS_KEY_ID: 'AKIA\tX' },
        'S3_ACCESS_KEY_ID: must not hold control characters (a line break?)',
      ],
      [
        { MUSICBRAINZ_USER_AGENT: 'app/1\r\nX-Injected: 1' },
        'MUSICBRAINZ_USER_AGENT: must not hold control characters (a line break?)',
      ],
      [
        { MUSICBRAINZ_CONTACT: 'ops@example.com\n' + 'x' },
        'MUSICBRAINZ_CONTACT: must not hold control characters (a line break?)',
      ],
      // Node's timers hold 2^31 - 1 ms: a longer one fires at once
      [
        { THREADS_IDLE_TIMEOUT_MS: '3000000000' },
        'THREADS_IDLE_TIMEOUT_MS: Too big: expected number to be <=2147483647',
      ],
    ];
    for (const [env, message] of cases) {
      const error = t.throws(() => loadConfig(env), ConfigError, JSON.stringify(env)) as Error;
      t.equal(error.message, `Invalid configuration:\n  ${message}`, JSON.stringify(env));
    }
    // what is fine stays fine: names, addresses, legacy bucket names, regions of S3 look-alikes
    for (const host of [
      'localhost',
      '0.0.0.0',
      '::',
      '::1',
      'api.internal.example.com',
      '10.0.0.7',
    ])
      t.equal(loadConfig({ HOST: host }).host, host);
    t.equal(
      loadConfig({ PUBLIC_URL: 'https://royalties.example.com/engine' }).publicUrl,
      'https://royalties.example.com/engine',
    );
    t.equal(
      loadConfig({ ...s3, S3_BUCKET: 'Legacy_Bucket.2017' }).s3!.bucket,
      'Legacy_Bucket.2017',
    );
    t.equal(loadConfig({ ...s3, S3_REGION: 'auto' }).s3!.region, 'auto');
    t.equal(
      loadConfig({ THREADS_IDLE_TIMEOUT_MS: '2147483647' }).threads.idleTimeoutMs,
      2_147_483_647,
    );
  },
);

t.test('statement ingestion: the time budget of a run and the cap per organization', async (t) => {
  t.same(loadConfig({}).ingest, { jobTimeoutMs: 1_800_000, orgConcurrency: 3 }, '3 of the 4 slots');
  t.equal(loadConfig({ WORKER_CONCURRENCY: '5' }).ingest.orgConcurrency, 4, 'all slots but one');
  t.equal(loadConfig({ WORKER_CONCURRENCY: '1' }).ingest.orgConcurrency, 1, 'at least one');
  t.same(loadConfig({ INGEST_ORG_CONCURRENCY: '1', INGEST_JOB_TIMEOUT_MS: '60000' }).ingest, {
    jobTimeoutMs: 60_000,
    orgConcurrency: 1,
  });
  for (const bad of ['0', '999', '2147483648'])
    t.throws(() => loadConfig({ INGEST_JOB_TIMEOUT_MS: bad }), /INGEST_JOB_TIMEOUT_MS/, bad);
  for (const bad of ['0', '101', '1.5'])
    t.throws(() => loadConfig({ INGEST_ORG_CONCURRENCY: bad }), /INGEST_ORG_CONCURRENCY/, bad);
});

t.test('worker threads: every thread warm unless THREADS_WARM says otherwise', async (t) => {
  t.equal(loadConfig({}).threads.warm, 2, 'THREADS_MAX, 2');
  t.equal(loadConfig({ THREADS_MAX: '4' }).threads.warm, 4, 'THREADS_MAX set');
  t.equal(loadConfig({ THREADS_MAX: '4', THREADS_WARM: '1' }).threads.warm, 1, 'a value kept');
  t.equal(loadConfig({ THREADS_WARM: '0' }).threads.warm, 0, 'none');
  t.equal(
    loadConfig({ THREADS_MAX: '1', THREADS_WARM: '3' }).threads.warm,
    1,
    'at most THREADS_MAX',
  );
  t.throws(() => loadConfig({ THREADS_WARM: '9' }), /THREADS_WARM/);
});
