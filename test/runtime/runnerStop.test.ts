// A job runner whose cron cannot reach its tables (the database down or restarting) stops at once:
// graphile-worker's cron then sleeps up to a minute between tries, in a sleep its stop waited for,
// so a Ctrl-C took as long (33 s seen after an embedded PostgreSQL was killed).
import { pino } from 'pino';
import t from 'tap';
import { createPool } from '../../src/db/pool.ts';
import { startJobRunner } from '../../src/jobs/runner.ts';
import { createTestDatabase } from '../helpers/db.ts';

t.test("stop does not wait for the cron's retry sleep", async (t) => {
  const db = await createTestDatabase();
  const pool = createPool(db.url, 4);
  t.teardown(async () => {
    await pool.end().catch(() => {});
    await db.drop();
  });
  // the cron's every query fails (as with its database gone); the worker pool's work goes on
  await pool.query(
    'ALTER TABLE graphile_worker._private_known_crontabs RENAME TO test_known_crontabs_away',
  );
  const lines: { msg: string }[] = [];
  const log = pino(
    { level: 'debug' },
    { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) },
  );
  let ran = 0;
  const runner = await startJobRunner({
    pool,
    taskList: { test_count: async () => void ran++, job_runner_recover: async () => {} },
    crontab: '* * * * * job_runner_recover',
    concurrency: 1,
    pollIntervalMs: 50,
    log,
  });
  // the cron's retries back off (200 ms × 1.5ⁿ): wait until it sleeps 4 s or more
  const sleeping = () =>
    lines.some(
      (l) =>
        /Cron hit an error; restarting in (\d+)/.exec(l.msg) &&
        Number(/restarting in (\d+)/.exec(l.msg)![1]) >= 4000,
    );
  const deadline = Date.now() + 60_000;
  while (!sleeping() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  t.ok(sleeping(), 'the cron is in a retry sleep of 4 s or more');
  // the jobs still run meanwhile
  await pool.query(`SELECT graphile_worker.add_job('test_count', '{}'::json)`);
  while (ran === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.equal(ran, 1, 'a job ran while the cron was failing');
  const started = Date.now();
  await runner.stop();
  const took = Date.now() - started;
  t.ok(took < 2_500, `stopped in ${took} ms (the cron's sleep is not waited for)`);
  const { rows } = await pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE locked_at IS NOT NULL',
  );
  t.equal(rows[0]!.n, 0, 'no job left locked');
});
