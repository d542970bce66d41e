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
    S3_BUCKET: 'b',
    S3_ACCESS_KEY_ID: 'k',
    S3_SECRET_ACCESS_KEY: 's',
  });
  t.equal(c.databaseUrl, 'postgres://u:p@db:5432/royalty');
  t.same(c.s3, { endpoint: 'http://minio:9000', bucket: 'b', region: 'us-east-1', accessKeyId: 'k', secretAccessKey: 's', forcePathStyle: true });
  t.equal(loadConfig({ DATABASE_URL: 'postgres://x/y' }).s3, undefined);
});

t.test('bad values fail fast naming the variable', async (t) => {
  t.throws(() => loadConfig({ PORT: 'eighty' }), ConfigError);
  t.throws(() => loadConfig({ PORT: '70000' }), /PORT/);
  t.throws(() => loadConfig({ S3_ENDPOINT: 'http://x' }), /S3_BUCKET, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY/);
  t.throws(() => loadConfig({ LOG_LEVEL: 'loud' }), /LOG_LEVEL/);
  t.throws(() => loadConfig({ DATABASE_URL: 'not a url' }), /DATABASE_URL/);
});
