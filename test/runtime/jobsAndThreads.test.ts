// The job runner (graphile-worker) and the worker-thread pool (piscina): start, work, stop.
import t from 'tap';
import { computeHeaderHash } from '../../workers/headerHash.ts';
import { startTestServer } from '../helpers/server.ts';
import { addJobUnchecked } from '../helpers/jobs.ts';

t.test('jobs run in the serve role and shutdown waits for the running one', async (t) => {
  const seen: number[] = [];
  let release: () => void = () => {};
  const firstDone = new Promise<void>((r) => (release = r));
  // the second job runs until the test lets it finish: no timer races a loaded machine
  let finishSecond: () => void = () => {};
  const secondMayFinish = new Promise<void>((r) => (finishSecond = r));
  const srv = await startTestServer(t, {
    role: 'serve',
    taskList: () => ({
      test_record: async (payload) => {
        const { n } = payload as { n: number };
        if (n === 2) await secondMayFinish;
        seen.push(n);
        if (seen.length === 1) release();
      },
    }),
  });
  await addJobUnchecked(srv.deps.pool, 'test_record', { n: 1 });
  await firstDone;
  t.same(seen, [1]);
  await addJobUnchecked(srv.deps.pool, 'test_record', { n: 2 });
  // wait until the second job is locked by the runner, then stop while it runs (the second one by
  // its payload: the first may still be locked for a moment while its completion is recorded)
  const pool = srv.deps.pool;
  const secondLocked = `SELECT count(*)::int AS n FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks k ON k.id = j.task_id
    WHERE k.identifier = 'test_record' AND j.payload->>'n' = '2' AND j.locked_at IS NOT NULL`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { rows } = await pool.query(secondLocked);
    if (rows[0].n === 1 || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  // only this test's task: the crontab's own jobs (statement_upload_expire every minute) may be due meanwhile
  const { rows: before } = await pool.query(secondLocked);
  t.equal(before[0].n, 1, 'the second job is running');
  // the runtime's own pool closes on stop: check the queue through a fresh connection afterwards
  const url = srv.config.databaseUrl!;
  const stopped = srv.runtime.stop();
  await new Promise((r) => setTimeout(r, 200));
  t.same(seen, [1], 'the stop waits while the job runs');
  finishSecond();
  await stopped;
  t.same(seen, [1, 2], 'the running job finished before the runner stopped');
  const pg = await import('pg');
  const client = new pg.default.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query(
    "SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = 'test_record'",
  );
  await client.end();
  t.equal(rows[0].n, 0, 'no job left locked or queued');
});

t.test('the thread pool runs worker functions and rebuilds their errors', async (t) => {
  const srv = await startTestServer(t);
  const cells = ['  Artist Name ', 'TRACK   Title', 'ISRC'];
  const res = await srv.deps.threads.headerHash({ cells });
  t.equal(res.hash, computeHeaderHash(cells));
  t.equal(res.hash, computeHeaderHash(['artist name', 'track title', 'isrc']));
  t.same(res.normalized, ['artist name', 'track title', 'isrc']);
  await t.rejects(srv.deps.threads.headerHash({ cells: 5 }), {
    name: 'AppError',
    errorCode: 'VALIDATION_FAILED',
    code: 'BAD_REQUEST',
  });
  t.ok(srv.deps.threads.stats.completed >= 2);
  await srv.deps.threads.close();
  await t.rejects(srv.deps.threads.headerHash({ cells }), {
    name: 'AppError',
    errorCode: 'SERVICE_UNAVAILABLE',
  });
});

t.test(
  'a job runner starts its warm thread before any statement; THREADS_MAX caps the threads of every task',
  async (t) => {
    const warm = await startTestServer(t, {
      role: 'worker',
      env: { THREADS_WARM: '1', THREADS_MAX: '2', THREADS_IDLE_TIMEOUT_MS: '50' },
    });
    // one thread, with the file reader and the normalizer loaded, started with the runtime
    t.equal(warm.deps.threads.stats.threads, 1);
    // tasks of several worker modules at once share the one pool: never more than THREADS_MAX threads
    const cells = ['ISRC', 'Title'];
    const hashes = Array.from({ length: 6 }, () => warm.deps.threads.headerHash({ cells }));
    const clusterings = Array.from({ length: 6 }, () =>
      warm.deps.threads.clusterTitles({ items: [] }),
    );
    let most = 0;
    const watch = setInterval(() => (most = Math.max(most, warm.deps.threads.stats.threads)), 1);
    const [hashed, clustered] = await Promise.all([Promise.all(hashes), Promise.all(clusterings)]);
    clearInterval(watch);
    most = Math.max(most, warm.deps.threads.stats.threads);
    t.same(
      hashed.map((h) => h.hash),
      Array(6).fill(computeHeaderHash(cells)),
    );
    t.same(clustered, Array(6).fill({ clusters: [] }));
    t.ok(most >= 1 && most <= 2, `at most THREADS_MAX threads (${most})`);
    // past the idle timeout the warm one stays, another goes
    for (let i = 0; i < 100 && warm.deps.threads.stats.threads > 1; i++)
      await new Promise((r) => setTimeout(r, 50));
    t.equal(warm.deps.threads.stats.threads, 1);
    const api = await startTestServer(t, { role: 'api', env: { THREADS_WARM: '1' } });
    t.equal(api.deps.threads.stats.threads, 0, 'an API process starts no threads');
    const cold = await startTestServer(t, { role: 'worker', env: { THREADS_WARM: '0' } });
    t.equal(cold.deps.threads.stats.threads, 0);
  },
);
