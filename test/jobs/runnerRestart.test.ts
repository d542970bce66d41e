// A job runner whose worker pool gives up (graphile-worker could not mark a job failed: its
// batched completion never retries, graphile/worker#636) is started again; meanwhile `health`
// is degraded with `jobs: unavailable`, and the job it could not mark is unlocked and run again
// by the new runner. Before, the runner stayed stopped for good and health said ok.
import t from 'tap';
import { restartSettings } from '../../src/jobs/runner.ts';
import { startTestHandler } from '../helpers/handler.ts';
import { until } from '../runtime/processes.ts';
import { addJobUnchecked } from '../helpers/jobs.ts';

// long enough to see the runner down
restartSettings.firstDelayMs = 3_000;

let runs = 0;
const srv = await startTestHandler(t, {
  taskList: () => ({
    test_flaky: async () => {
      runs++;
      if (runs === 1) throw new Error('the first attempt fails');
    },
  }),
});
const { pool } = srv.deps;
const health = async () => {
  const res = await srv.anonymous.query('health');
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data as { status: string; checks: Record<string, string> };
};

t.test(
  'a runner that could not mark a job failed starts again; health is degraded meanwhile',
  async (t) => {
    const before = await health();
    t.same(
      [before.status, before.checks],
      ['ok', { database: 'ok', objectStore: 'ok', jobs: 'ok' }],
    );
    // marking a job failed fails (as with its database gone at that moment)
    await pool.query(`
    CREATE FUNCTION test_refuse_failure() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.last_error IS NOT NULL THEN RAISE EXCEPTION 'refused'; END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER test_refuse_failure BEFORE UPDATE ON graphile_worker._private_jobs FOR EACH ROW EXECUTE FUNCTION test_refuse_failure();`);
    const jobId = await addJobUnchecked(srv.deps.pool, 'test_flaky', {});
    const row = async () =>
      (
        await pool.query<{ locked_by: string | null; attempts: number }>(
          'SELECT locked_by, attempts FROM graphile_worker._private_jobs WHERE id = $1',
          [jobId],
        )
      ).rows[0];

    await until('the job ran once', () => runs === 1, 30_000);
    await until(
      'health tells jobs cannot run',
      async () => (await health()).checks.jobs === 'unavailable',
      2_500,
    );
    const during = await health();
    t.same(
      [during.status, during.checks],
      ['degraded', { database: 'ok', objectStore: 'ok', jobs: 'unavailable' }],
    );

    await until(
      'the job ran again and completed',
      async () => runs === 2 && (await row()) === undefined,
      30_000,
    );
    t.equal(runs, 2, 'run once more, by the new runner');
    const after = await health();
    t.same([after.status, after.checks], ['ok', { database: 'ok', objectStore: 'ok', jobs: 'ok' }]);
    const locked = await pool.query(
      'SELECT 1 FROM graphile_worker._private_jobs WHERE locked_by IS NOT NULL',
    );
    t.equal(locked.rowCount, 0, 'nothing left locked');
  },
);
