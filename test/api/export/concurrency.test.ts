// Exports of one organization are built one at a time (a graphile-worker queue per organization),
// so a member who asks for many exports at once cannot take every job runner slot from the other
// organizations' work; other organizations' exports run beside them.
import { pino } from 'pino';
import t from 'tap';
import { startJobRunner } from '../../../src/jobs/runner.ts';
import { taskList } from '../../../src/jobs/tasks.ts';
import { seedDataset } from '../../analytics/dataset.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';

// no job runner of its own: the exports are queued first, then one runner of four slots starts
const srv = await startTestHandler(t);
const db = srv.deps.pool;
const a = await newOrganization(srv, 'Busy Export Org');
const dsA = await seedDataset(srv, a.organizationId);
const b = await newOrganization(srv, 'Other Export Org');
const dsB = await seedDataset(srv, b.organizationId, 'B ');

t.test(
  "one organization's exports run one after another; another organization's run beside them",
  async (t) => {
    // every status change of an export, with the time it was made
    await db.query(
      `CREATE TABLE test_export_log (export_id uuid, organization_id uuid, status text, at timestamptz DEFAULT clock_timestamp())`,
    );
    await db.query(`CREATE FUNCTION test_export_log() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN INSERT INTO test_export_log (export_id, organization_id, status) VALUES (NEW.id, NEW.organization_id, NEW.status); RETURN NEW; END $$`);
    await db.query(
      `CREATE TRIGGER test_export_log AFTER UPDATE OF status ON exports FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION test_export_log()`,
    );
    const ids: string[] = [];
    for (const format of ['csv', 'xlsx', 'parquet', 'csv'] as const) {
      const res = await a.client.mutate('export.trigger', {
        organizationId: a.organizationId,
        type: 'royalty_lines',
        format,
        rightsholderIds: [dsA.rh1, dsA.rh2],
      });
      if (!res.ok) throw new Error(JSON.stringify(res.error));
      ids.push(res.data.exportId);
    }
    const other = await b.client.mutate('export.trigger', {
      organizationId: b.organizationId,
      type: 'earnings_summary',
      format: 'csv',
      rightsholderIds: [dsB.rh1],
    });
    if (!other.ok) throw new Error(JSON.stringify(other.error));
    ids.push(other.data.exportId);
    const queues = await db.query<{ queue_name: string }>(
      `SELECT queue_name FROM graphile_worker.jobs WHERE task_identifier = 'export_build' ORDER BY id`,
    );
    t.same(
      queues.rows.map((r) => r.queue_name),
      [
        ...ids.slice(0, 4).map(() => `export_build:${a.organizationId}`),
        `export_build:${b.organizationId}`,
      ],
      'a queue per organization, named after it',
    );
    const runner = await startJobRunner({
      pool: db,
      taskList: taskList(srv.deps),
      crontab: '',
      concurrency: 4,
      pollIntervalMs: 100,
      log: pino({ level: 'silent' }),
    });
    try {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const { rows } = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM exports WHERE id = ANY ($1) AND status = 'completed'`,
          [ids],
        );
        if (rows[0]!.n === ids.length) break;
        if (Date.now() > deadline) throw new Error('the exports did not complete');
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await runner.stop();
    }
    const { rows } = await db.query<{
      export_id: string;
      organization_id: string;
      status: string;
      at: Date;
    }>('SELECT * FROM test_export_log ORDER BY at');
    // at any moment, how many exports of organization A are running
    let running = 0;
    let most = 0;
    for (const r of rows.filter((r) => r.organization_id === a.organizationId)) {
      if (r.status === 'running') running++;
      else running--;
      most = Math.max(most, running);
    }
    t.equal(most, 1, "organization A's four exports never ran at the same time");
    t.equal(rows.filter((r) => r.status === 'completed').length, 5);
    const bStarted = rows.find(
      (r) => r.organization_id === b.organizationId && r.status === 'running',
    )!.at;
    const aDone = rows
      .filter((r) => r.organization_id === a.organizationId && r.status === 'completed')
      .map((r) => r.at);
    t.ok(
      bStarted < aDone[aDone.length - 1]!,
      "organization B's export did not wait for all of A's",
    );
    const { rows: jobs } = await db.query(
      `SELECT task_identifier, count(*)::int AS n FROM graphile_worker.jobs GROUP BY 1`,
    );
    t.same(
      jobs,
      [{ task_identifier: 'export_expire', n: 5 }],
      'no build job is left; each export waits for its expiry',
    );
  },
);
