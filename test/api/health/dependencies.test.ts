// `health` at the handler when a dependency is in trouble: a database whose connections
// are all taken (the pool would wait for one without end) answers within the check's timeout as
// unavailable, and a bucket removed behind the service's back is reported, not created again.
import { CreateBucketCommand, DeleteBucketCommand, HeadBucketCommand } from '@aws-sdk/client-s3';
import type { PoolClient } from 'pg';
import t from 'tap';
import { healthSettings } from '../../../src/api/health.ts';
import { startTestHandler } from '../../helpers/handler.ts';

t.setTimeout(120_000);
healthSettings.checkTimeoutMs = 500;

const srv = await startTestHandler(t);

t.test('every dependency answering: ok', async (t) => {
  const res = await srv.anonymous.query('health');
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  t.same([res.data.status, res.data.checks], ['ok', { database: 'ok', objectStore: 'ok' }]);
});

t.test(
  'every database connection taken: unavailable within the timeout, ok again once one is free',
  async (t) => {
    const held: PoolClient[] = [];
    // the handler's pool has 5 connections (DATABASE_POOL_SIZE)
    for (let i = 0; i < srv.config.databasePoolSize; i++) held.push(await srv.deps.pool.connect());
    try {
      const started = Date.now();
      const res = await srv.anonymous.query('health');
      if (!res.ok) throw new Error(JSON.stringify(res.error));
      t.same(
        [res.data.status, res.data.checks],
        ['degraded', { database: 'unavailable', objectStore: 'ok' }],
      );
      t.ok(Date.now() - started < 10_000, 'answered, not left waiting for a connection');
    } finally {
      for (const c of held) c.release();
    }
    const again = await srv.anonymous.query('health');
    if (!again.ok) throw new Error(JSON.stringify(again.error));
    t.equal(again.data.checks.database, 'ok');
  },
);

t.test('the bucket gone: objectStore unavailable, and health does not create it', async (t) => {
  const { client, bucket } = srv.deps.store;
  await client.send(new DeleteBucketCommand({ Bucket: bucket }));
  t.teardown(() => client.send(new CreateBucketCommand({ Bucket: bucket })).then(() => {}));
  const res = await srv.anonymous.query('health');
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  t.same(
    [res.data.status, res.data.checks],
    ['degraded', { database: 'ok', objectStore: 'unavailable' }],
  );
  await t.rejects(client.send(new HeadBucketCommand({ Bucket: bucket })), 'still gone');
});
