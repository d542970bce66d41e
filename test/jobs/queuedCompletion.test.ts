// A job of a named queue is marked done (deleted, its queue unlocked) as its task returns, before
// graphile-worker's worker asks for its next job: the worker then finds the queue's next job at
// once instead of the queue still locked (src/jobs/runner.ts, completingQueued). A job that
// failed, or one of no queue, is left to graphile-worker.
import t from 'tap';
import type { Task } from 'graphile-worker';
import { completingQueued } from '../../src/jobs/runner.ts';
import { startTestHandler } from '../helpers/handler.ts';

const srv = await startTestHandler(t, { jobs: true });
const { pool } = srv.deps;
const POOL_ID = 'test-pool';

/** A job of `test_held` (a task no runner knows), locked by POOL_ID as graphile-worker locks the job it runs. */
async function lockedJob(queueName: string | null) {
  const { rows } = await pool.query<{ id: string; job_queue_id: number | null }>(
    `SELECT id::text, job_queue_id FROM graphile_worker.add_job('test_held', '{}'::json, queue_name => $1::text)`,
    [queueName],
  );
  const job = rows[0]!;
  await pool.query(
    `UPDATE graphile_worker._private_jobs SET locked_at = now(), locked_by = $2, attempts = attempts + 1 WHERE id = $1`,
    [job.id, POOL_ID],
  );
  if (job.job_queue_id !== null)
    await pool.query(
      `UPDATE graphile_worker._private_job_queues SET locked_at = now(), locked_by = $2 WHERE id = $1`,
      [job.job_queue_id, POOL_ID],
    );
  return { ...job, locked_by: POOL_ID };
}

const jobRow = async (id: string) =>
  (await pool.query('SELECT 1 FROM graphile_worker._private_jobs WHERE id = $1', [id])).rowCount;
const queueLockedBy = async (id: number) =>
  (
    await pool.query<{ locked_by: string | null }>(
      'SELECT locked_by FROM graphile_worker._private_job_queues WHERE id = $1',
      [id],
    )
  ).rows[0]!.locked_by;

/** Runs `task` wrapped as the runner wraps it, for `job`. */
async function runWrapped(
  task: Task,
  job: Awaited<ReturnType<typeof lockedJob>>,
  done: Set<string>,
): Promise<void> {
  const wrapped = completingQueued({ test_held: task }, pool, done).test_held as Task;
  await wrapped({}, { job } as unknown as Parameters<Task>[1]);
}

t.test('a job of a named queue is done, its queue free, when its task returns', async (t) => {
  const job = await lockedJob('test-queue-a');
  const done = new Set<string>();
  let ran = false;
  await runWrapped(
    async () => {
      ran = true;
      t.equal(await jobRow(job.id), 1, 'not before the task returns');
    },
    job,
    done,
  );
  t.ok(ran);
  t.equal(await jobRow(job.id), 0, 'the job is gone');
  t.equal(await queueLockedBy(job.job_queue_id!), null, 'its queue is unlocked');
  t.ok(done.has(job.id), 'told as done early');
});

t.test('a failed job is left locked to graphile-worker', async (t) => {
  const job = await lockedJob('test-queue-b');
  const done = new Set<string>();
  await t.rejects(
    runWrapped(
      async () => {
        throw new Error('the task fails');
      },
      job,
      done,
    ),
    /the task fails/,
  );
  t.equal(await jobRow(job.id), 1, 'the job is still there');
  t.equal(await queueLockedBy(job.job_queue_id!), POOL_ID, 'its queue still locked');
  t.equal(done.size, 0);
});

t.test('a job of no queue is left to graphile-worker', async (t) => {
  const job = await lockedJob(null);
  const done = new Set<string>();
  await runWrapped(async () => {}, job, done);
  t.equal(await jobRow(job.id), 1, 'the job is still there');
  t.equal(done.size, 0);
});
