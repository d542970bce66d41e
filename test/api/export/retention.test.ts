// Retention: a completed export keeps its files until its expiresAt (7 days after it completed by
// default); past it the export is expired at once for every caller (no files listed, downloads
// EXPORT_EXPIRED), and the export_expire job, scheduled with the completion for that time, deletes
// its objects and file rows. A download link never outlives the files.
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import t from 'tap';
import { expireExports } from '../../../src/exports/expire.ts';
import { failExport } from '../../../src/exports/run.ts';
import { seedDataset } from '../../analytics/dataset.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { runExport } from './helpers.ts';

const srv = await startTestHandler(t, { jobs: true });
const db = srv.deps.pool;
const owner = await newOrganization(srv, 'Retention Org');
const org = owner.organizationId;
const ds = await seedDataset(srv, org);
const both = [ds.rh1, ds.rh2];

async function objectsUnder(prefix: string): Promise<string[]> {
  const res = await srv.deps.store.client.send(
    new ListObjectsV2Command({ Bucket: srv.deps.store.bucket, Prefix: prefix }),
  );
  return (res.Contents ?? []).map((o) => o.Key!).sort();
}

const status = async (exportId: string) =>
  (await owner.client.query('export.status', { organizationId: org, exportId })).data;
const listFiles = async (exportId: string) =>
  (await owner.client.query('export.listFiles', { organizationId: org, exportId })).data;
const download = (exportId: string, fileId: string) =>
  owner.client.mutate('export.downloadFile', { organizationId: org, exportId, fileId });

t.test(
  'a completed export expires 7 days after it completed; its expiry job is scheduled with it',
  async (t) => {
    const done = await runExport(owner.client, org, {
      type: 'earnings_summary',
      format: 'csv',
      rightsholderIds: both,
    });
    t.equal(done.status, 'completed');
    t.equal(
      Date.parse(done.expiresAt) - Date.parse(done.finishedAt),
      7 * 24 * 3600 * 1000,
      'expiresAt is finishedAt + 168 hours',
    );
    const { rows } = await db.query<{ run_at: Date; key: string }>(
      `SELECT run_at, key FROM graphile_worker.jobs WHERE task_identifier = 'export_expire' AND key = $1`,
      [`export_expire:${done.id}`],
    );
    t.equal(rows.length, 1);
    t.equal(rows[0]!.run_at.toISOString(), done.expiresAt, 'the job runs at the expiry');
    const queued = await owner.client.mutate('export.trigger', {
      organizationId: org,
      type: 'statements',
      format: 'csv',
      rightsholderIds: both,
    });
    t.match(
      queued,
      { ok: true, data: { export: { status: 'queued', expiresAt: null } } },
      'an export not completed has no expiry',
    );
  },
);

t.test('a download link never outlives the files', async (t) => {
  const done = await runExport(owner.client, org, {
    type: 'earnings_summary',
    format: 'csv',
    rightsholderIds: both,
  });
  const [file] = (await listFiles(done.id)).files;
  const soon = new Date(Date.now() + 90_000);
  await db.query('UPDATE exports SET expires_at = $2 WHERE id = $1', [done.id, soon]);
  const link = await download(done.id, file.id);
  t.equal(link.ok, true);
  const left = Date.parse(link.data.expiresAt) - soon.getTime();
  t.ok(
    left <= 0 && left > -2_000,
    `the link ends with the export (${link.data.expiresAt} vs ${soon.toISOString()})`,
  );
  const signed = Number(new URL(link.data.url).searchParams.get('X-Amz-Expires'));
  t.ok(
    signed >= 88 && signed <= 90,
    `the signature's lifetime is the export's remaining time (${signed} s)`,
  );
});

t.test('past its expiry an export is expired at once, and the job deletes its files', async (t) => {
  const reader = await addMember(srv, org, 'member');
  const due = await runExport(owner.client, org, {
    type: 'royalty_lines',
    format: 'parquet',
    rightsholderIds: both,
  });
  const kept = await runExport(owner.client, org, {
    type: 'royalty_lines',
    format: 'csv',
    rightsholderIds: both,
  });
  const files = (await listFiles(due.id)).files;
  t.equal(files.length, 1);
  const earlyLink = await download(due.id, files[0].id);
  t.equal((await fetch(earlyLink.data.url)).status, 200);
  await db.query(
    `UPDATE exports SET expires_at = clock_timestamp() - interval '1 second' WHERE id = $1`,
    [due.id],
  );
  // before the job ran: every caller sees it expired, and no link is handed out
  t.match(await status(due.id), { status: 'expired', rowCount: 7, fileCount: 1 });
  t.same(await listFiles(due.id), { exportId: due.id, status: 'expired', files: [] });
  for (const caller of [owner, reader]) {
    const res = await caller.client.mutate('export.downloadFile', {
      organizationId: org,
      exportId: due.id,
      fileId: files[0].id,
    });
    t.match(res, {
      ok: false,
      error: {
        data: { code: 'NOT_FOUND', errorCode: 'EXPORT_EXPIRED', httpStatus: 404 },
        message: /expired at .*trigger it again/,
      },
    });
  }
  const expiredList = await owner.client.query('export.list', {
    organizationId: org,
    status: ['expired'],
  });
  t.same(
    expiredList.data.data.map((e: { id: string }) => e.id),
    [due.id],
    'listed as expired',
  );
  const completedList = await owner.client.query('export.list', {
    organizationId: org,
    status: ['completed'],
  });
  t.notOk(
    completedList.data.data.some((e: { id: string }) => e.id === due.id),
    'not as completed',
  );
  t.ok(completedList.data.data.some((e: { id: string }) => e.id === kept.id));
  // the job, due now, run by the service's job runner
  await db.query(`UPDATE graphile_worker._private_jobs SET run_at = now() WHERE key = $1`, [
    `export_expire:${due.id}`,
  ]);
  const deadline = Date.now() + 30_000;
  while (
    (
      await db.query(`SELECT 1 FROM graphile_worker.jobs WHERE key = $1`, [
        `export_expire:${due.id}`,
      ])
    ).rowCount
  ) {
    if (Date.now() > deadline) throw new Error('the expiry job did not run');
    await new Promise((r) => setTimeout(r, 100));
  }
  const { rows } = await db.query<{ status: string; purged: boolean; files: number }>(
    `SELECT status, purged_at IS NOT NULL AS purged, (SELECT count(*)::int FROM export_files f WHERE f.export_id = e.id) AS files FROM exports e WHERE id = $1`,
    [due.id],
  );
  t.same(rows, [{ status: 'expired', purged: true, files: 0 }]);
  t.same(await objectsUnder(`orgs/${org}/exports/${due.id}/`), [], 'no object stays');
  t.equal((await fetch(earlyLink.data.url)).status, 404, 'a link handed out before is dead');
  t.match(await status(due.id), { status: 'expired', rowCount: 7, fileCount: 1, errorCode: null });
  t.match(await download(due.id, files[0].id), {
    ok: false,
    error: { data: { errorCode: 'EXPORT_EXPIRED' } },
  });
  const { rows: events } = await db.query<{ action: string }>(
    `SELECT action FROM activity_events WHERE subject_type = 'export' AND subject_id = $1 ORDER BY id`,
    [due.id],
  );
  t.same(
    events.map((e) => e.action),
    ['export.trigger', 'export.completed', 'export.downloadFile', 'export.expired'],
  );
  // an export not due keeps everything
  t.match(await status(kept.id), { status: 'completed' });
  t.equal((await objectsUnder(`orgs/${org}/exports/${kept.id}/`)).length, 1);
  const keptFiles = (await listFiles(kept.id)).files;
  t.equal((await fetch((await download(kept.id, keptFiles[0].id)).data.url)).status, 200);
});

t.test(
  'a sweep finishes what an interrupted one left, and sweeps every due export whatever job runs it',
  async (t) => {
    const a = await runExport(owner.client, org, {
      type: 'earnings_summary',
      format: 'xlsx',
      rightsholderIds: both,
    });
    const b = await runExport(owner.client, org, {
      type: 'earnings_summary',
      format: 'parquet',
      rightsholderIds: both,
    });
    // a: expired, its objects not yet deleted (the sweep died between the two steps)
    await db.query(
      `UPDATE exports SET status = 'expired', expires_at = clock_timestamp() - interval '1 hour' WHERE id = $1`,
      [a.id],
    );
    // b: due, its own job lost
    await db.query(
      `UPDATE exports SET expires_at = clock_timestamp() - interval '1 minute' WHERE id = $1`,
      [b.id],
    );
    await db.query(`DELETE FROM graphile_worker._private_jobs WHERE key = $1`, [
      `export_expire:${b.id}`,
    ]);
    t.equal((await objectsUnder(`orgs/${org}/exports/${a.id}/`)).length, 1);
    const first = await expireExports(srv.deps);
    t.same(first, { expired: 1, purged: 2 });
    t.same(await objectsUnder(`orgs/${org}/exports/${a.id}/`), []);
    t.same(await objectsUnder(`orgs/${org}/exports/${b.id}/`), []);
    t.same(await expireExports(srv.deps), { expired: 0, purged: 0 }, 'nothing left to do');
  },
);

t.test(
  'the hourly sweep expires a due export when no export_expire job is left for it (no export completed since)',
  async (t) => {
    const due = await runExport(owner.client, org, {
      type: 'earnings_summary',
      format: 'csv',
      rightsholderIds: both,
    });
    t.equal((await objectsUnder(`orgs/${org}/exports/${due.id}/`)).length, 1);
    await db.query(
      `UPDATE exports SET expires_at = clock_timestamp() - interval '1 minute' WHERE id = $1`,
      [due.id],
    );
    await db.query(`DELETE FROM graphile_worker._private_jobs WHERE key = $1`, [
      `export_expire:${due.id}`,
    ]);
    // the job as the crontab adds it at the top of the hour, run by the service's job runner
    const { rows: added } = await db.query<{ id: string }>(
      `SELECT id FROM graphile_worker.add_job('export_expire_sweep', $1::json, max_attempts => 1)`,
      [JSON.stringify({ _cron: { ts: new Date().toISOString(), backfilled: false } })],
    );
    const deadline = Date.now() + 30_000;
    while (
      (await db.query(`SELECT 1 FROM graphile_worker.jobs WHERE id = $1`, [added[0]!.id])).rowCount
    ) {
      if (Date.now() > deadline) throw new Error('the sweep did not run');
      await new Promise((r) => setTimeout(r, 100));
    }
    const { rows } = await db.query<{ status: string; purged: boolean; files: number }>(
      `SELECT status, purged_at IS NOT NULL AS purged, (SELECT count(*)::int FROM export_files f WHERE f.export_id = e.id) AS files FROM exports e WHERE id = $1`,
      [due.id],
    );
    t.same(rows, [{ status: 'expired', purged: true, files: 0 }]);
    t.same(await objectsUnder(`orgs/${org}/exports/${due.id}/`), [], 'no object stays');
    const { rows: events } = await db.query<{ action: string }>(
      `SELECT action FROM activity_events WHERE subject_type = 'export' AND subject_id = $1 ORDER BY id`,
      [due.id],
    );
    t.same(
      events.map((e) => e.action),
      ['export.trigger', 'export.completed', 'export.expired'],
      'expired once',
    );
    // and with a per-export job running alongside, nothing is expired twice
    t.same(await expireExports(srv.deps), { expired: 0, purged: 0 });
  },
);

t.test(
  'the hourly sweep and an export_expire job running at once expire a due export once',
  async (t) => {
    const due = await runExport(owner.client, org, {
      type: 'statements',
      format: 'xlsx',
      rightsholderIds: both,
    });
    await db.query(
      `UPDATE exports SET expires_at = clock_timestamp() - interval '1 minute' WHERE id = $1`,
      [due.id],
    );
    const runs = await Promise.all([
      expireExports(srv.deps),
      expireExports(srv.deps),
      expireExports(srv.deps),
    ]);
    t.equal(
      runs.reduce((n, r) => n + r.expired, 0),
      1,
      `expired by one run (${JSON.stringify(runs)})`,
    );
    t.ok(runs.some((r) => r.purged >= 1));
    t.same(await objectsUnder(`orgs/${org}/exports/${due.id}/`), []);
    const { rows } = await db.query<{ action: string }>(
      `SELECT action FROM activity_events WHERE subject_type = 'export' AND subject_id = $1 AND action = 'export.expired'`,
      [due.id],
    );
    t.equal(rows.length, 1, 'one export.expired event');
    t.same(
      (
        await db.query(
          'SELECT status, purged_at IS NOT NULL AS purged FROM exports WHERE id = $1',
          [due.id],
        )
      ).rows,
      [{ status: 'expired', purged: true }],
    );
  },
);

t.test(
  'a failed export whose objects could not be removed at once is purged by the next sweep',
  async (t) => {
    const done = await runExport(owner.client, org, {
      type: 'statements',
      format: 'csv',
      rightsholderIds: both,
    });
    const id = done.id as string;
    // as if its attempt were still running (no job runs it), with a part written
    await db.query(`UPDATE exports SET status = 'running', attempts = 1 WHERE id = $1`, [id]);
    await db.query('DELETE FROM export_files WHERE export_id = $1', [id]);
    await srv.deps.store.put(`orgs/${org}/exports/${id}/attempt-1/part.csv`, 'partial');
    const client = srv.deps.store.client;
    const send = client.send;
    (client as { send: unknown }).send = async function (
      command: { constructor: { name: string } },
      ...rest: unknown[]
    ) {
      if (command.constructor.name === 'DeleteObjectCommand')
        throw new Error('the object store is unavailable');
      return (send as (...a: unknown[]) => Promise<unknown>).call(client, command, ...rest);
    };
    try {
      await failExport(srv.deps, id, 'EXPORT_ACCESS_REVOKED', 'test');
    } finally {
      delete (client as { send?: unknown }).send;
    }
    t.match(
      await status(id),
      { status: 'failed', errorCode: 'EXPORT_ACCESS_REVOKED' },
      'failed all the same',
    );
    t.equal((await objectsUnder(`orgs/${org}/exports/${id}/`)).length, 2, 'the objects stayed');
    const swept = await expireExports(srv.deps);
    t.ok(swept.purged >= 1);
    t.same(await objectsUnder(`orgs/${org}/exports/${id}/`), [], 'the sweep removed it');
    t.same(
      (await db.query('SELECT purged_at IS NOT NULL AS purged FROM exports WHERE id = $1', [id]))
        .rows,
      [{ purged: true }],
    );
  },
);
