// The queued work of an organization soft-deleted before it ran: nothing is built or written for it.
// An export fails with ORGANIZATION_NOT_FOUND (its objects removed, no file listed). The server runs
// no job runner of its own: the work is queued first, the organization deleted, then a real job
// runner is started on the server's task list.
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { enqueueBlockRefresh } from '../../src/catalog/blocks.ts';
import { catalogEnrichTickTask } from '../../src/jobs/tasks/catalog_enrich_tick.ts';
import { startJobRunner } from '../../src/jobs/runner.ts';
import { taskList } from '../../src/jobs/tasks.ts';
import { seedDataset } from '../analytics/dataset.ts';
import { distrokid } from '../catalog/helpers.ts';
import { createRightsholder, putFile } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestHandler } from '../helpers/handler.ts';

const srv = await startTestHandler(t);
const db = srv.deps.pool;

async function objectsUnder(prefix: string): Promise<string[]> {
  const res = await srv.deps.store.client.send(
    new ListObjectsV2Command({ Bucket: srv.deps.store.bucket, Prefix: prefix }),
  );
  return (res.Contents ?? []).map((o) => o.Key!).sort();
}

/** A real job runner on the server's task list: one job at a time, no crontab, quiet. */
function startRunner() {
  return startJobRunner({
    pool: db,
    taskList: taskList(srv.deps),
    crontab: '',
    concurrency: 1,
    pollIntervalMs: 100,
    log: pino({ level: 'silent' }),
  });
}

/** Runs a real job runner until no job of these keys is left (done or failed for good). */
async function runJobs(keys: string[], ms = 60_000): Promise<void> {
  const runner = await startRunner();
  try {
    const deadline = Date.now() + ms;
    for (;;) {
      const { rows } = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE key = ANY ($1) AND (locked_at IS NOT NULL OR attempts < max_attempts)',
        [keys],
      );
      if (rows[0]!.n === 0) return;
      if (Date.now() > deadline)
        throw new Error(`jobs ${keys.join(', ')} still pending after ${ms} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await runner.stop();
  }
}

/** A new organization with one rightsholder and one DistroKid statement uploaded, its job queued. */
async function orgWithQueuedStatement(
  name: string,
  artist: string,
  title: string,
  isrc: string,
  net: string,
) {
  const owner = await newOrganization(srv, name);
  const org = owner.organizationId;
  const rh = await createRightsholder(owner.client, org, artist);
  const up = await putFile(
    owner.client,
    org,
    rh,
    'dk.tsv',
    distrokid([[artist, title, isrc, net]]),
  );
  return { owner, org, rh, up };
}

/** A new organization with the analytics dataset and one export of it triggered, its job queued. */
async function orgWithQueuedExport(t: Test, name: string, type: string, format: string) {
  const owner = await newOrganization(srv, name);
  const org = owner.organizationId;
  const ds = await seedDataset(srv, org);
  const res = await owner.client.mutateUnchecked('export.trigger', {
    organizationId: org,
    type,
    format,
    rightsholderIds: [ds.rh1, ds.rh2],
  });
  t.equal(res.ok, true);
  return { owner, org, exportId: res.ok ? (res.data.exportId as string) : '' };
}

/** A trigger that soft-deletes the organization of a row of `table` when an update of `column` makes `when` hold. */
async function deleteOrgWhen(t: Test, table: string, column: string, when: string) {
  const name = `test_delete_org_on_${table}`;
  await db.query(`CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN UPDATE organizations SET deleted_at = now() WHERE id = NEW.organization_id AND deleted_at IS NULL; RETURN NEW; END $$`);
  await db.query(`CREATE TRIGGER ${name} AFTER UPDATE OF ${column} ON ${table} FOR EACH ROW
    WHEN (${when}) EXECUTE FUNCTION ${name}()`);
  t.teardown(() => db.query(`DROP TRIGGER ${name} ON ${table}`));
}

async function isDeleted(org: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'SELECT 1 FROM organizations WHERE id = $1 AND deleted_at IS NOT NULL',
    [org],
  );
  return rowCount === 1;
}

async function exportOutcome(exportId: string) {
  const { rows } = await db.query(
    'SELECT status, error_code, row_count, file_count FROM exports WHERE id = $1',
    [exportId],
  );
  const files = await db.query('SELECT id FROM export_files WHERE export_id = $1', [exportId]);
  return { rows, files: files.rows };
}

t.test(
  'a queued export of an organization deleted before it ran fails with ORGANIZATION_NOT_FOUND and writes nothing',
  async (t) => {
    const { owner, org, exportId } = await orgWithQueuedExport(
      t,
      'Deleted Export Org',
      'royalty_lines',
      'csv',
    );
    const deleted = await owner.client.mutate('organization.delete', { organizationId: org });
    t.match(deleted, { ok: true, data: { deleted: true } });
    await runJobs([`export_build:${exportId}`]);
    const { rows, files } = await exportOutcome(exportId);
    t.same(rows, [
      { status: 'failed', error_code: 'ORGANIZATION_NOT_FOUND', row_count: null, file_count: null },
    ]);
    t.same(files, [], 'no file listed');
    t.same(await objectsUnder(`orgs/${org}/exports/`), [], 'no object written');
  },
);

t.test(
  'an export whose organization is deleted while it runs fails at completion and keeps none of its objects',
  async (t) => {
    // the organization is deleted the moment the export reports its first written part
    await deleteOrgWhen(
      t,
      'exports',
      'progress_done',
      "NEW.status = 'running' AND NEW.progress_done > 0",
    );
    const { org, exportId } = await orgWithQueuedExport(
      t,
      'Deleted Mid-Export Org',
      'earnings_summary',
      'parquet',
    );
    await runJobs([`export_build:${exportId}`]);
    t.ok(await isDeleted(org), 'deleted mid-run');
    const { rows, files } = await exportOutcome(exportId);
    t.same(rows, [
      { status: 'failed', error_code: 'ORGANIZATION_NOT_FOUND', row_count: null, file_count: null },
    ]);
    t.same(files, []);
    t.same(await objectsUnder(`orgs/${org}/exports/`), [], 'the written part is removed');
  },
);

t.test(
  'a queued statement of an organization deleted before it ran is not processed: it fails with ORGANIZATION_NOT_FOUND',
  async (t) => {
    const { owner, org, rh, up } = await orgWithQueuedStatement(
      'Deleted Ingest Org',
      'Gone Artist',
      'Never Processed',
      'USRC12400009',
      '1.25',
    );
    t.same((await db.query('SELECT status FROM statements WHERE id = $1', [up.statementId])).rows, [
      { status: 'uploaded' },
    ]);
    t.match(await owner.client.mutate('organization.delete', { organizationId: org }), {
      ok: true,
    });
    await runJobs([`statement_ingest:${up.statementId}`]);
    const { rows } = await db.query(
      'SELECT status, failure_code, normalized_version, row_count FROM statements WHERE id = $1',
      [up.statementId],
    );
    t.match(rows, [{ status: 'failed', failure_code: 'ORGANIZATION_NOT_FOUND', row_count: null }]);
    const keys = await objectsUnder(`orgs/${org}/statements/${up.statementId}/`);
    t.ok(
      keys.every((k) => k.includes('/original/')),
      `only the upload itself is stored: ${keys.join(', ')}`,
    );
    t.same(
      (await db.query('SELECT 1 FROM catalog_blocks WHERE rightsholder_id = $1', [rh])).rows,
      [],
      'no catalog block built',
    );
  },
);

t.test(
  "a deleted organization's catalog: due enrichment is not drained again and again, a queued block refresh rebuilds nothing",
  async (t) => {
    const { owner, org, rh, up } = await orgWithQueuedStatement(
      'Deleted Catalog Org',
      'Catalog Artist',
      'Pending Song',
      'USRC12400010',
      '2.50',
    );
    await runJobs([
      `statement_ingest:${up.statementId}`,
      `catalog_block_refresh:${rh}`,
      'catalog_enrich',
    ]);
    t.same((await db.query('SELECT status FROM statements WHERE id = $1', [up.statementId])).rows, [
      { status: 'processed' },
    ]);
    // its musical details wait for enrichment when the organization is deleted
    const pending = await db.query(
      `UPDATE musical_details SET state = 'pending', next_attempt_at = now() - interval '1 minute' WHERE organization_id = $1`,
      [org],
    );
    t.equal(pending.rowCount, 1);
    t.match(await owner.client.mutate('organization.delete', { organizationId: org }), {
      ok: true,
    });
    const seq = (
      await db.query<{ s: string }>(
        `SELECT pg_get_serial_sequence('graphile_worker._private_jobs', 'id') AS s`,
      )
    ).rows[0]!.s;
    const lastJobId = async () =>
      Number((await db.query<{ id: string }>(`SELECT last_value AS id FROM ${seq}`)).rows[0]!.id);
    await db.query(
      `SELECT graphile_worker.add_job('catalog_enrich', '{}'::json, queue_name => 'catalog_enrich', job_key => 'catalog_enrich')`,
    );
    const before = await lastJobId();
    const runner = await startRunner();
    await new Promise((r) => setTimeout(r, 3_000));
    await runner.stop();
    t.ok(
      (await lastJobId()) - before <= 1,
      `drains queued in 3 s: ${(await lastJobId()) - before}`,
    );
    t.same(
      (await db.query(`SELECT state FROM musical_details WHERE organization_id = $1`, [org])).rows,
      [{ state: 'pending' }],
      'nothing fetched for it',
    );
    // nor does the minute tick queue a drain for it
    await db.query(`SELECT graphile_worker.remove_job('catalog_enrich')`);
    await catalogEnrichTickTask(srv.deps)({}, {} as never);
    t.same(
      (
        await db.query(
          `SELECT id FROM graphile_worker.jobs WHERE task_identifier = 'catalog_enrich'`,
        )
      ).rows,
      [],
      'the tick queues no drain',
    );
    // a block refresh queued for it (before the deletion) rebuilds nothing
    const blockBefore = (
      await db.query(
        'SELECT id, state, updated_at FROM catalog_blocks WHERE rightsholder_id = $1',
        [rh],
      )
    ).rows;
    t.equal(blockBefore.length, 1);
    await enqueueBlockRefresh(db, org, [rh], 'test');
    await db.query(`UPDATE graphile_worker._private_jobs SET run_at = now() WHERE key = $1`, [
      `catalog_block_refresh:${rh}`,
    ]);
    await runJobs([`catalog_block_refresh:${rh}`]);
    t.same(
      (
        await db.query(
          'SELECT id, state, updated_at FROM catalog_blocks WHERE rightsholder_id = $1',
          [rh],
        )
      ).rows,
      blockBefore,
      'the block is not refreshed',
    );
  },
);

t.test(
  'a statement whose organization is deleted while it is processed keeps nothing of the run: it fails with ORGANIZATION_NOT_FOUND',
  async (t) => {
    const { org, up } = await orgWithQueuedStatement(
      'Deleted Mid-Ingest Org',
      'Mid Artist',
      'Half Processed',
      'USRC12400011',
      '3.75',
    );
    // the organization is deleted the moment the run takes the statement (after the task's own check)
    await deleteOrgWhen(
      t,
      'statements',
      'status',
      `NEW.status = 'processing' AND NEW.organization_id = '${org}'`,
    );
    await runJobs([`statement_ingest:${up.statementId}`]);
    t.ok(await isDeleted(org), 'deleted mid-run');
    const { rows } = await db.query(
      'SELECT status, failure_code, normalized_key, normalized_version FROM statements WHERE id = $1',
      [up.statementId],
    );
    t.same(rows, [
      {
        status: 'failed',
        failure_code: 'ORGANIZATION_NOT_FOUND',
        normalized_key: null,
        normalized_version: 0,
      },
    ]);
    t.same(
      (
        await db.query('SELECT currency FROM statement_fx WHERE statement_id = $1', [
          up.statementId,
        ])
      ).rows,
      [],
      'no rates recorded',
    );
    const keys = await objectsUnder(`orgs/${org}/statements/${up.statementId}/`);
    t.ok(
      keys.length > 0 && keys.every((k) => k.includes('/original/')),
      `only the upload itself is stored: ${keys.join(', ')}`,
    );
  },
);
