// The job-task plumbing against the real database: every task of src/jobs/payloads.ts has its
// executor in the task list, `enqueue` adds a job as graphile-worker's add_job does (inside a
// transaction: with its commit only), and a task's payload that does not parse is dropped without
// running it, with the problem logged.
import t from 'tap';
import type { JobHelpers } from 'graphile-worker';
import { createPool, withTransaction } from '../../src/db/pool.ts';
import type { Deps } from '../../src/deps.ts';
import { defineTask } from '../../src/jobs/defineTask.ts';
import { enqueue } from '../../src/jobs/enqueue.ts';
import { TASK, taskPayloads } from '../../src/jobs/payloads.ts';
import { taskList } from '../../src/jobs/tasks.ts';
import { createTestDatabase } from '../helpers/db.ts';

const database = await createTestDatabase();
const pool = createPool(database.url, 2);
t.teardown(async () => {
  await pool.end();
  await database.drop();
});

const jobs = async () =>
  (
    await pool.query<{
      task_identifier: string;
      payload: unknown;
      queue_name: string | null;
      max_attempts: number;
      key: string | null;
      priority: number;
    }>(
      `SELECT t.identifier AS task_identifier, j.payload, q.queue_name, j.max_attempts, j.key, j.priority
       FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
       LEFT JOIN graphile_worker._private_job_queues q ON q.id = j.job_queue_id ORDER BY j.id`,
    )
  ).rows;

t.test('every task has its executor, named by its identifier', async (t) => {
  const list = taskList({} as Deps);
  t.same(Object.keys(list).sort(), Object.keys(taskPayloads).sort());
  t.equal(TASK.statement_ingest, 'statement_ingest');
  for (const [id, task] of Object.entries(list)) t.type(task, 'function', id);
});

t.test('enqueue: the job as specified; in a transaction, only with its commit', async (t) => {
  const organizationId = '6a0b7a5e-0000-4000-8000-000000000001';
  const statementId = '6a0b7a5e-0000-4000-8000-000000000002';
  await t.rejects(
    withTransaction(pool, async (db) => {
      await enqueue(
        db,
        TASK.statement_ingest,
        { organizationId, statementId, reason: 'rolled back' },
        { jobKey: 'k:1' },
      );
      throw new Error('roll back');
    }),
    /roll back/,
  );
  t.same(await jobs(), [], 'a rolled-back transaction adds no job');
  await withTransaction(pool, (db) =>
    enqueue(
      db,
      TASK.statement_ingest,
      { organizationId, statementId, reason: 'complete' },
      { jobKey: 'k:1', queueName: 'q:1', maxAttempts: 5, priority: 3 },
    ),
  );
  await enqueue(pool, TASK.catalog_enrich, {}, { runInSeconds: 3600 });
  t.same(await jobs(), [
    {
      task_identifier: 'statement_ingest',
      payload: { organizationId, statementId, reason: 'complete' },
      queue_name: 'q:1',
      max_attempts: 5,
      key: 'k:1',
      priority: 3,
    },
    {
      task_identifier: 'catalog_enrich',
      payload: {},
      queue_name: null,
      max_attempts: 25,
      key: null,
      priority: 0,
    },
  ]);
  const { rows } = await pool.query<{ later: boolean }>(
    `SELECT run_at > now() + interval '59 minutes' AS later FROM graphile_worker.jobs WHERE task_identifier = 'catalog_enrich'`,
  );
  t.same(rows, [{ later: true }], 'runInSeconds counts from the database clock');
});

t.test('a payload that does not parse is dropped, not run', async (t) => {
  const ran: unknown[] = [];
  const invalid: string[] = [];
  const define = defineTask(
    TASK.export_build,
    async (payload) => {
      ran.push(payload);
    },
    {
      onInvalid: async (problems) => {
        invalid.push(problems);
      },
    },
  );
  t.equal(define.id, 'export_build');
  const logged: string[] = [];
  const helpers = { logger: { error: (m: string) => logged.push(m) } } as unknown as JobHelpers;
  const task = define({} as Deps);
  for (const hostile of [
    {},
    { organizationId: 'x', exportId: '1; DROP TABLE exports' },
    null,
    'export',
    [1, 2],
  ])
    await task(hostile, helpers);
  t.same(ran, []);
  t.equal(invalid.length, 5);
  t.equal(logged.length, 5);
  t.match(logged[1], /^export_build: invalid payload, dropped: organizationId: .*; exportId: /);
  const ok = {
    organizationId: '6a0b7a5e-0000-4000-8000-000000000001',
    exportId: '6a0b7a5e-0000-4000-8000-000000000003',
  };
  await task(ok, helpers);
  t.same(ran, [ok]);
});
