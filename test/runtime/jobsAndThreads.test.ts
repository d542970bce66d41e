// The job runner (graphile-worker) and the worker-thread pool (piscina): start, work, stop.
import t from 'tap';
import { computeHeaderHash } from '../../workers/headerHash.ts';
import { startTestServer } from '../helpers/server.ts';

t.test('jobs run in the serve role and shutdown waits for the running one', async (t) => {
  const seen: number[] = [];
  let release: () => void = () => {};
  const firstDone = new Promise<void>((r) => (release = r));
  const srv = await startTestServer(t, {
    role: 'serve',
    taskList: () => ({
      test_record: async (payload) => {
        const { n, waitMs } = payload as { n: number; waitMs: number };
        await new Promise((r) => setTimeout(r, waitMs));
        seen.push(n);
        if (seen.length === 1) release();
      },
    }),
  });
  await srv.deps.jobs.addJob('test_record', { n: 1, waitMs: 0 });
  await firstDone;
  t.same(seen, [1]);
  await srv.deps.jobs.addJob('test_record', { n: 2, waitMs: 400 });
  // wait until the second job is locked by the runner, then stop while it runs
  for (let i = 0; i < 100; i++) {
    const { rows } = await srv.deps.pool.query("SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = 'test_record' AND locked_at IS NOT NULL");
    if (rows[0].n === 1) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const pool = srv.deps.pool;
  // only this test's task: the crontab's own jobs (statement_upload_expire every minute) may be due meanwhile
  const { rows: before } = await pool.query("SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = 'test_record'");
  t.equal(before[0].n, 1, 'the second job is queued or running');
  // the runtime's own pool closes on stop: check the queue through a fresh connection afterwards
  const url = srv.config.databaseUrl!;
  await srv.runtime.stop();
  t.same(seen, [1, 2], 'the running job finished before the runner stopped');
  const pg = await import('pg');
  const client = new pg.default.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query("SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = 'test_record'");
  await client.end();
  t.equal(rows[0].n, 0, 'no job left locked or queued');
});

t.test('the thread pool runs worker functions and rebuilds their errors', async (t) => {
  const srv = await startTestServer(t);
  const cells = ['  Artist Name ', 'TRACK   Title', 'ISRC'];
  const res = await srv.deps.threads.run<{ ok: true; hash: string; normalized: string[] }>('headerHash', 'headerHash', { cells });
  t.equal(res.hash, computeHeaderHash(cells));
  t.equal(res.hash, computeHeaderHash(['artist name', 'track title', 'isrc']));
  t.same(res.normalized, ['artist name', 'track title', 'isrc']);
  await t.rejects(srv.deps.threads.run('headerHash', 'headerHash', { cells: 5 }), { name: 'AppError', errorCode: 'VALIDATION_FAILED', code: 'BAD_REQUEST' });
  t.ok(srv.deps.threads.stats.completed >= 2);
  await srv.deps.threads.close();
  await t.rejects(srv.deps.threads.run('headerHash', 'headerHash', { cells }), { name: 'AppError', errorCode: 'SERVICE_UNAVAILABLE' });
});
