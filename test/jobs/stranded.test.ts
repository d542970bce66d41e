// Work whose job is gone (src/jobs/stranded.ts): a statement or export whose job was never added is
// queued again; one whose job spent its attempts without recording the failure (its last runner
// died) fails as that attempt would have failed it; work with a job that may still run, and work
// changed in the last two minutes, is left alone. The server runs no job runner here, so the jobs
// stay in the queue to be looked at.
import t from 'tap';
import { collectEmptyJobQueues, recoverStrandedWork } from '../../src/jobs/stranded.ts';
import { createRightsholder } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestHandler } from '../helpers/handler.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Stranded Org');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Stranded Artist');
const db = srv.deps.pool;

const jobsOf = async (key: string) =>
  (
    await db.query<{ attempts: number; max_attempts: number }>(
      'SELECT attempts, max_attempts FROM graphile_worker.jobs WHERE key = $1',
      [key],
    )
  ).rows;

/** A statement in `status`, last changed `minutes` ago, with no job. */
async function statement(status: string, minutes: number): Promise<string> {
  const up = await owner.client.mutate('upload.uploadFile', {
    organizationId: org,
    rightsholderId: artist,
    fileName: `${status}.csv`,
  });
  if (!up.ok) throw new Error(JSON.stringify(up.error));
  await db.query(
    `UPDATE statements SET status = $2, updated_at = now() - make_interval(mins => $3) WHERE id = $1`,
    [up.data.statementId, status, minutes],
  );
  return up.data.statementId as string;
}

/** An export (its job queued by export.trigger), then set to `status`, last changed `minutes` ago. */
async function exportIn(status: string, minutes: number): Promise<string> {
  const res = await owner.client.mutate('export.trigger', {
    organizationId: org,
    type: 'royalty_lines',
    format: 'csv',
    rightsholderIds: [artist],
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  await db.query(
    `UPDATE exports SET status = $2, updated_at = now() - make_interval(mins => $3) WHERE id = $1`,
    [res.data.exportId, status, minutes],
  );
  return res.data.exportId as string;
}

const spend = (key: string) =>
  db.query('UPDATE graphile_worker._private_jobs SET attempts = max_attempts WHERE key = $1', [
    key,
  ]);

t.test(
  'lost jobs are queued again; spent ones fail their work; live or recent work is left alone',
  async (t) => {
    const lost = await statement('uploaded', 5);
    const recent = await statement('uploaded', 0);
    const spentStatement = await statement('processing', 5);
    await db.query(
      `SELECT graphile_worker.add_job('statement_ingest', json_build_object('organizationId', $1::text, 'statementId', $2::text, 'reason', 'test'), job_key := $3, max_attempts := 5)`,
      [org, spentStatement, `statement_ingest:${spentStatement}`],
    );
    await spend(`statement_ingest:${spentStatement}`);
    const waiting = await statement('uploaded', 5);
    await db.query(
      `SELECT graphile_worker.add_job('statement_ingest', '{}'::json, job_key := $1, max_attempts := 5)`,
      [`statement_ingest:${waiting}`],
    );

    const lostExport = await exportIn('queued', 5);
    await db.query('DELETE FROM graphile_worker._private_jobs WHERE key = $1', [
      `export_build:${lostExport}`,
    ]);
    const spentExport = await exportIn('running', 5);
    await spend(`export_build:${spentExport}`);
    const liveExport = await exportIn('queued', 5);

    t.same(await recoverStrandedWork(srv.deps), { requeued: 2, failed: 2 });

    t.equal(
      (await jobsOf(`statement_ingest:${lost}`)).length,
      1,
      'the lost statement is queued again',
    );
    t.same(
      await jobsOf(`statement_ingest:${recent}`),
      [],
      'a statement changed just now is left alone',
    );
    const failed = await owner.client.mutate('upload.statements', {
      organizationId: org,
      filter: { statementIds: [spentStatement] },
    });
    t.same(
      failed.ok && [failed.data.items[0]?.status, failed.data.items[0]?.failureReason?.errorCode],
      ['failed', 'INGEST_FAILED'],
    );
    t.same(
      await jobsOf(`statement_ingest:${waiting}`),
      [{ attempts: 0, max_attempts: 5 }],
      'a job that may still run is left as it is',
    );

    t.same(
      await jobsOf(`export_build:${lostExport}`),
      [{ attempts: 0, max_attempts: 3 }],
      'the lost export is queued again',
    );
    const spentStatus = await owner.client.query('export.status', {
      organizationId: org,
      exportId: spentExport,
    });
    t.match(spentStatus.ok && spentStatus.data, { status: 'failed', errorCode: 'EXPORT_FAILED' });
    t.same(await jobsOf(`export_build:${liveExport}`), [{ attempts: 0, max_attempts: 3 }]);

    // a statement's queue whose job is done
    await db.query(
      `SELECT graphile_worker.add_job('statement_ingest', '{}'::json, queue_name := 'statement_ingest:done', job_key := 'done')`,
    );
    await db.query(`SELECT graphile_worker.remove_job('done')`);
    t.equal(
      (
        await db.query(
          `SELECT 1 FROM graphile_worker._private_job_queues WHERE queue_name = 'statement_ingest:done'`,
        )
      ).rowCount,
      1,
    );
    t.same(
      await recoverStrandedWork(srv.deps),
      { requeued: 0, failed: 0 },
      'nothing is done twice',
    );
    // the statements' own job queues that hold no job are gone
    const queues = await db.query<{ queue_name: string }>(
      `SELECT queue_name FROM graphile_worker._private_job_queues q WHERE NOT EXISTS (SELECT 1 FROM graphile_worker._private_jobs j WHERE j.job_queue_id = q.id)`,
    );
    t.same(queues.rows, []);
  },
);

t.test(
  'empty job queues go, but never one a job is being added to (graphile-worker GC_JOB_QUEUES orphaned it)',
  async (t) => {
    const queueOf = async (key: string) =>
      (
        await db.query<{ queue: string | null }>(
          `SELECT q.queue_name AS queue FROM graphile_worker._private_jobs j LEFT JOIN graphile_worker._private_job_queues q ON q.id = j.job_queue_id WHERE j.key = $1`,
          [key],
        )
      ).rows;
    // a queue left empty by its last job
    await db.query(
      `SELECT graphile_worker.add_job('gc_probe', '{}'::json, queue_name => 'gc_probe_queue', job_key => 'gc_probe_1')`,
    );
    await db.query(`SELECT graphile_worker.remove_job('gc_probe_1')`);
    // a job for it is being added, in a transaction not yet committed, while the queues are collected
    const adding = await db.connect();
    try {
      await adding.query('BEGIN');
      await adding.query(
        `SELECT graphile_worker.add_job('gc_probe', '{}'::json, queue_name => 'gc_probe_queue', job_key => 'gc_probe_2')`,
      );
      const collecting = collectEmptyJobQueues(db);
      await new Promise((r) => setTimeout(r, 300));
      await adding.query('COMMIT');
      t.ok((await collecting) !== null, 'it waited for the job to be added');
    } finally {
      adding.release();
    }
    t.same(
      await queueOf('gc_probe_2'),
      [{ queue: 'gc_probe_queue' }],
      "the job's queue is there: the job can run",
    );
    // once the queue is empty again, it goes
    await db.query(`SELECT graphile_worker.remove_job('gc_probe_2')`);
    t.ok(((await collectEmptyJobQueues(db)) ?? 0) >= 1);
    t.same(
      (
        await db.query(
          `SELECT 1 FROM graphile_worker._private_job_queues WHERE queue_name = 'gc_probe_queue'`,
        )
      ).rows,
      [],
    );
    // a job the race left pointing at no queue is set free to run
    await db.query(
      `SELECT graphile_worker.add_job('gc_probe', '{}'::json, queue_name => 'gc_probe_lost', job_key => 'gc_probe_3')`,
    );
    await db.query(
      `DELETE FROM graphile_worker._private_job_queues WHERE queue_name = 'gc_probe_lost'`,
    );
    await collectEmptyJobQueues(db);
    t.same(
      (
        await db.query(
          `SELECT job_queue_id FROM graphile_worker._private_jobs WHERE key = 'gc_probe_3'`,
        )
      ).rows,
      [{ job_queue_id: null }],
    );
    await db.query(`SELECT graphile_worker.remove_job('gc_probe_3')`);
  },
);
