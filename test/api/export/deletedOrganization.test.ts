// A soft-deleted organization's completed exports stop being downloadable at once (every
// procedure answers ORGANIZATION_NOT_FOUND) and are due: organization.delete expires them and
// schedules the export_expire job now, and the sweep (export_expire_sweep runs the same) treats
// them as due even without that job, so their objects go instead of waiting out the retention.
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import t, { type Test } from 'tap';
import { expireExports } from '../../../src/exports/expire.ts';
import { seedDataset } from '../../analytics/dataset.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { runExport } from './helpers.ts';

const srv = await startTestHandler(t, { jobs: true });
const db = srv.deps.pool;

async function objectsUnder(prefix: string): Promise<string[]> {
  const res = await srv.deps.store.client.send(
    new ListObjectsV2Command({ Bucket: srv.deps.store.bucket, Prefix: prefix }),
  );
  return (res.Contents ?? []).map((o) => o.Key!).sort();
}

async function completedExport(t: Test, name: string) {
  const owner = await newOrganization(srv, name);
  const org = owner.organizationId;
  const ds = await seedDataset(srv, org);
  const done = await runExport(owner.client, org, {
    type: 'earnings_summary',
    format: 'csv',
    rightsholderIds: [ds.rh1, ds.rh2],
  });
  t.equal(done.status, 'completed');
  const files = await owner.client.query('export.listFiles', {
    organizationId: org,
    exportId: done.id,
  });
  const fileId = files.data.files[0].id as string;
  const link = await owner.client.mutate('export.downloadFile', {
    organizationId: org,
    exportId: done.id,
    fileId,
  });
  t.equal((await fetch(link.data.url)).status, 200, 'downloadable before the deletion');
  return { owner, org, exportId: done.id as string, fileId, url: link.data.url as string };
}

t.test(
  "deleting the organization expires its exports and schedules their files' deletion now",
  async (t) => {
    const { owner, org, exportId, fileId, url } = await completedExport(t, 'Deleted Org Exports');
    t.equal((await objectsUnder(`orgs/${org}/exports/${exportId}/`)).length, 1);
    const before = Date.now();
    t.match(await owner.client.mutate('organization.delete', { organizationId: org }), {
      ok: true,
      data: { deleted: true },
    });
    const res = await owner.client.mutate('export.downloadFile', {
      organizationId: org,
      exportId,
      fileId,
    });
    t.match(
      res,
      { ok: false, error: { data: { code: 'NOT_FOUND', errorCode: 'ORGANIZATION_NOT_FOUND' } } },
      'no new link',
    );
    const { rows } = await db.query<{ expires_at: Date }>(
      'SELECT expires_at FROM exports WHERE id = $1',
      [exportId],
    );
    t.ok(
      rows[0]!.expires_at.getTime() <= Date.now() && rows[0]!.expires_at.getTime() >= before - 1000,
      'its expiry is the deletion',
    );
    // the export_expire job, due now, run by the service's job runner
    const deadline = Date.now() + 30_000;
    while (
      !(await db.query('SELECT 1 FROM exports WHERE id = $1 AND purged_at IS NOT NULL', [exportId]))
        .rowCount
    ) {
      if (Date.now() > deadline) throw new Error('the export_expire job did not purge the export');
      await new Promise((r) => setTimeout(r, 100));
    }
    t.same(
      (
        await db.query(
          'SELECT status, purged_at IS NOT NULL AS purged FROM exports WHERE id = $1',
          [exportId],
        )
      ).rows,
      [{ status: 'expired', purged: true }],
    );
    t.same(
      (await db.query('SELECT id FROM export_files WHERE export_id = $1', [exportId])).rows,
      [],
    );
    t.same(await objectsUnder(`orgs/${org}/exports/${exportId}/`), [], 'its objects are gone');
    t.equal(
      (await fetch(url)).status,
      404,
      'a link handed out before the deletion reaches nothing',
    );
  },
);

t.test(
  "the sweep treats a deleted organization's completed exports as due, whatever their expiry",
  async (t) => {
    const { org, exportId } = await completedExport(t, 'Deleted Org Sweep');
    // deleted behind the API's back: no expiry set, no job scheduled; only the sweep can find it
    await db.query('UPDATE organizations SET deleted_at = now() WHERE id = $1', [org]);
    await db.query('DELETE FROM graphile_worker._private_jobs WHERE key = $1', [
      `export_expire:${exportId}`,
    ]);
    const { rows } = await db.query<{ future: boolean }>(
      "SELECT expires_at > now() + interval '6 days' AS future FROM exports WHERE id = $1",
      [exportId],
    );
    t.same(rows, [{ future: true }], 'its retention has days to run');
    await expireExports(srv.deps);
    t.same(
      (
        await db.query(
          'SELECT status, purged_at IS NOT NULL AS purged FROM exports WHERE id = $1',
          [exportId],
        )
      ).rows,
      [{ status: 'expired', purged: true }],
    );
    t.same(await objectsUnder(`orgs/${org}/exports/${exportId}/`), [], 'its objects are gone');
    const events = await db.query(
      'SELECT action FROM activity_events WHERE subject_id = $1 AND action = $2',
      [exportId, 'export.expired'],
    );
    t.equal(events.rowCount, 1, 'one export.expired event');
  },
);
