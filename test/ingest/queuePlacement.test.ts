// Where statement jobs go, against the real database (no job runner): a statement joins the queue
// its job is already in, else the organization's least busy queue (the first of them); its
// priority is the organization's statements waiting; each placed as if the ones before it had
// been added, all of them read and added in one round trip each.
import t from 'tap';
import { createPool } from '../../src/db/pool.ts';
import { enqueueStatementIngest, STATEMENT_INGEST_TASK } from '../../src/ingest/queue.ts';
import { loadConfig } from '../../src/config.ts';
import { createTestDatabase } from '../helpers/db.ts';

const database = await createTestDatabase();
const pool = createPool(database.url, 2);
t.teardown(async () => {
  await pool.end();
  await database.drop();
});

const ORG = '6a0b7a5e-0000-4000-8000-00000000000a';
const OTHER = '6a0b7a5e-0000-4000-8000-00000000000b';
const id = (n: string) => `6a0b7a5e-0000-4000-8000-0000000000${n}`;
const Q = `${STATEMENT_INGEST_TASK}:${ORG}:`;
const key = (statementId: string) => `${STATEMENT_INGEST_TASK}:${statementId}`;

async function addJob(queue: string, statementId: string, organizationId = ORG): Promise<void> {
  await pool.query(
    `SELECT graphile_worker.add_job($1, $2::json, queue_name => $3, job_key => $4, max_attempts => 5)`,
    [
      STATEMENT_INGEST_TASK,
      JSON.stringify({ organizationId, statementId, reason: 'complete' }),
      queue,
      key(statementId),
    ],
  );
}

t.test('placed one after another: own queue, least busy queue, waiting count', async (t) => {
  const deps = {
    pool,
    config: loadConfig({
      DATABASE_URL: database.url,
      INGEST_ORG_CONCURRENCY: '3',
      DEMO_BOOTSTRAP: 'false',
    }),
  };
  t.equal(deps.config.ingest.orgConcurrency, 3);
  // a waiting in queue 1; b running in queue 0; c failed for good in queue 2; another
  // organization's statement waiting (not counted)
  await addJob(`${Q}1`, id('a1'));
  await addJob(`${Q}0`, id('b1'));
  await addJob(`${Q}2`, id('c1'));
  await addJob(`${STATEMENT_INGEST_TASK}:${OTHER}:0`, id('f0'), OTHER);
  await pool.query(
    `UPDATE graphile_worker._private_jobs SET locked_at = now(), locked_by = 'elsewhere' WHERE key = $1`,
    [key(id('b1'))],
  );
  await pool.query(
    `UPDATE graphile_worker._private_jobs SET attempts = max_attempts WHERE key = $1`,
    [key(id('c1'))],
  );

  await enqueueStatementIngest(
    deps,
    ORG,
    [id('d1'), id('a1'), id('b1'), id('e1'), id('f1'), id('c1'), id('d1')],
    'reprocess',
  );
  const { rows } = await pool.query(
    `SELECT j.key, q.queue_name AS queue, j.priority, j.attempts, j.locked_at IS NOT NULL AS locked,
       j.payload->>'statementId' AS statement, j.payload->>'reason' AS reason, j.max_attempts
     FROM graphile_worker._private_jobs j JOIN graphile_worker._private_job_queues q ON q.id = j.job_queue_id
     WHERE j.payload->>'organizationId' = $1 ORDER BY j.key NULLS LAST, j.id`,
    [ORG],
  );
  const job = (s: string, queue: string, priority: number, reason = 'reprocess') => ({
    key: key(id(s)),
    queue: `${Q}${queue}`,
    priority,
    attempts: 0,
    locked: false,
    statement: id(s),
    reason,
    max_attempts: 5,
  });
  t.same(rows, [
    // a's waiting job replaced in its queue; b's and c's, running and failed, make way for new ones
    // in their queues; d to the first of three equally busy queues, then replaced by its second
    // mention; e and f to the least busy
    job('a1', '1', 2),
    job('b1', '0', 2),
    job('c1', '2', 5),
    job('d1', '0', 6),
    job('e1', '1', 3),
    job('f1', '2', 4),
    { ...job('b1', '0', 0, 'complete'), key: null, attempts: 5, locked: true },
    { ...job('c1', '2', 0, 'complete'), key: null, attempts: 5 },
  ]);
});

t.test('no statements: nothing read, nothing added', async (t) => {
  const deps = {
    pool,
    config: loadConfig({ DATABASE_URL: database.url, DEMO_BOOTSTRAP: 'false' }),
  };
  const before = await pool.query('SELECT count(*)::int AS n FROM graphile_worker._private_jobs');
  await enqueueStatementIngest(deps, ORG, [], 'reprocess');
  const after = await pool.query('SELECT count(*)::int AS n FROM graphile_worker._private_jobs');
  t.same(after.rows, before.rows);
});
