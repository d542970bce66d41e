// A job runner killed outright (SIGKILL: no shutdown code runs) leaves its job locked; the other
// runners see its liveness lock gone and unlock the job at once instead of after graphile-worker's
// 4-hour stale timeout, while a live runner's jobs are never touched.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { makeWorkerUtils } from 'graphile-worker';
import { pino } from 'pino';
import t from 'tap';
import { createPool, type Pool } from '../../src/db/pool.ts';
import { recoverDeadRunnerJobs } from '../../src/jobs/liveness.ts';
import { startJobRunner } from '../../src/jobs/runner.ts';
import { createTestDatabase } from '../helpers/db.ts';

const log = pino({ level: 'silent' });

/** runners' liveness locks held in this test's database (other test files' runners use other databases) */
async function liveLocks(pool: Pool): Promise<number> {
  const { rows } = await pool.query(
    `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = 7499641::oid AND granted
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  return rows.length;
}

/** a database of its own with graphile-worker's schema, a pool and the queue's utilities */
async function jobDatabase(t: { teardown(fn: () => unknown): void }) {
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  const pool = createPool(db.url, 4);
  t.teardown(() => pool.end());
  const utils = await makeWorkerUtils({ pgPool: pool });
  t.teardown(() => utils.release());
  await utils.migrate();
  return { db, pool, utils };
}

t.test(
  'the job of a killed runner is unlocked and run by another; a live runner keeps its job',
  async (t) => {
    const { db, pool, utils } = await jobDatabase(t);
    const job = await utils.addJob('test_hang', {}, { maxAttempts: 3 });

    const child = spawn(
      process.execPath,
      ['--import', 'tsx', new URL('../helpers/hangingRunner.ts', import.meta.url).pathname],
      {
        env: { ...process.env, DATABASE_URL: db.url },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    t.teardown(() => child.kill('SIGKILL'));
    let out = '';
    child.stdout.setEncoding('utf8');
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (s: string) => {
        out += s;
        if (out.includes('\n')) resolve();
      });
      child.once('exit', (code) =>
        reject(new Error(`the runner exited (${code}) before taking the job`)),
      );
    });
    const [, jobId, lockedBy] = out.trim().split(' ');
    t.equal(jobId, String(job.id));

    const locked = async () =>
      (
        await pool.query<{ locked_by: string | null; attempts: number }>(
          'SELECT locked_by, attempts FROM graphile_worker._private_jobs WHERE id = $1',
          [job.id],
        )
      ).rows[0];
    // alive: its lock is held, so even with no grace its job stays locked
    t.same(await recoverDeadRunnerJobs(pool, 0), { pools: [], jobs: 0 });
    t.same(await locked(), { locked_by: lockedBy, attempts: 1 });

    child.kill('SIGKILL');
    await once(child, 'exit');
    // dead, but it locked the job within the grace period: left alone
    t.same(await recoverDeadRunnerJobs(pool, 3600), { pools: [], jobs: 0 });
    // PostgreSQL ends the killed process's sessions (and their locks) as it notices the closed sockets
    let recovered = await recoverDeadRunnerJobs(pool, 0);
    for (let i = 0; i < 100 && recovered.jobs === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      recovered = await recoverDeadRunnerJobs(pool, 0);
    }
    t.same(recovered, { pools: [lockedBy], jobs: 1 });
    // the attempt stays counted: a job that kills its runner every time ends after max_attempts
    t.same(await locked(), { locked_by: null, attempts: 1 });

    // another runner takes it and runs it to the end
    let ran = 0;
    const runner = await startJobRunner({
      pool,
      taskList: { test_hang: async () => void ran++ },
      crontab: '',
      concurrency: 1,
      pollIntervalMs: 50,
      log,
    });
    for (let i = 0; i < 100 && (await locked()) !== undefined; i++)
      await new Promise((r) => setTimeout(r, 100));
    await runner.stop();
    t.equal(ran, 1);
    t.equal(await locked(), undefined, 'the job is done');
    // the stopped runner gave its liveness lock back
    t.equal(await liveLocks(pool), 0);
  },
);

t.test('a runner whose liveness connection is cut takes its lock again', async (t) => {
  const { pool, utils } = await jobDatabase(t);
  let finish = () => {};
  let started = () => {};
  const running = new Promise<void>((r) => (started = r));
  const runner = await startJobRunner({
    pool,
    taskList: { test_hang: () => new Promise<void>((r) => ((finish = r), started())) },
    crontab: '',
    concurrency: 1,
    pollIntervalMs: 50,
    log,
  });
  const job = await utils.addJob('test_hang', {});
  await running;
  const lockCount = () => liveLocks(pool);
  t.equal(await lockCount(), 1);
  const cut = await pool.query<{ pid: number }>(
    `SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'royalty-engine job runner liveness' AND datname = current_database()`,
  );
  t.equal(cut.rows.length, 1);
  // held again by a new session
  const heldByNewSession = async () =>
    (
      await pool.query(
        `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = 7499641::oid AND granted AND pid <> $1
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [cut.rows[0]!.pid],
      )
    ).rows.length;
  let count = await heldByNewSession();
  for (let i = 0; i < 150 && count === 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    count = await heldByNewSession();
  }
  t.equal(count, 1, 'the lock is held again');
  t.same(await recoverDeadRunnerJobs(pool, 0), { pools: [], jobs: 0 });
  finish();
  await runner.stop();
  const left = await pool.query('SELECT 1 FROM graphile_worker._private_jobs WHERE id = $1', [
    job.id,
  ]);
  t.equal(left.rows.length, 0, 'the job completed');
  t.equal(await lockCount(), 0);
});
