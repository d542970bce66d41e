// A rightsholder deleted (rightsholder.deleteById) or flagged deleted (updateById isDeleted) after
// an export naming it was asked for: the export is not built without it (a queued one fails with
// RIGHTSHOLDER_NOT_FOUND, one running when it goes fails at completion), so no export silently
// lacks a rightsholder it names.
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import t from 'tap';
import { expireExports, retireExportsOf } from '../../../src/exports/expire.ts';
import { buildExport } from '../../../src/exports/run.ts';
import { seedDataset } from '../../analytics/dataset.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';

const srv = await startTestHandler(t);
const db = srv.deps.pool;
const owner = await newOrganization(srv, 'Deleted Rightsholder Export Org');
const org = owner.organizationId;

async function objectsUnder(prefix: string): Promise<string[]> {
  const res = await srv.deps.store.client.send(
    new ListObjectsV2Command({ Bucket: srv.deps.store.bucket, Prefix: prefix }),
  );
  return (res.Contents ?? []).map((o) => o.Key!).sort();
}

async function trigger(rightsholderIds: string[]): Promise<string> {
  const res = await owner.client.mutate('export.trigger', {
    organizationId: org,
    type: 'royalty_lines',
    format: 'csv',
    rightsholderIds,
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data.exportId as string;
}

const status = async (exportId: string) =>
  (await owner.client.query('export.status', { organizationId: org, exportId })).data;

t.test(
  'a queued export whose rightsholder was deleted fails with RIGHTSHOLDER_NOT_FOUND and stores nothing',
  async (t) => {
    const ds = await seedDataset(srv, org, 'Q ');
    const id = await trigger([ds.rh1, ds.rh2]);
    const deleted = await owner.client.mutate('rightsholder.deleteById', {
      organizationId: org,
      id: ds.rh2,
    });
    t.equal(deleted.ok, true);
    t.equal(await buildExport(srv.deps, id), 'failed');
    t.match(await status(id), {
      status: 'failed',
      errorCode: 'RIGHTSHOLDER_NOT_FOUND',
      reason: new RegExp(ds.rh2),
      rowCount: null,
    });
    t.same(await objectsUnder(`orgs/${org}/exports/${id}/`), []);
  },
);

t.test('a queued export whose rightsholder was flagged deleted fails the same way', async (t) => {
  const ds = await seedDataset(srv, org, 'F ');
  const id = await trigger([ds.rh1, ds.rh2]);
  const flagged = await owner.client.mutate('rightsholder.updateById', {
    organizationId: org,
    id: ds.rh1,
    name: 'F Artist One',
    isDeleted: true,
  });
  t.equal(flagged.ok, true, JSON.stringify(flagged));
  t.equal(await buildExport(srv.deps, id), 'failed');
  t.match(await status(id), { status: 'failed', errorCode: 'RIGHTSHOLDER_NOT_FOUND' });
});

t.test(
  'a rightsholder deleted while the export runs: it fails at completion and keeps none of its objects',
  async (t) => {
    const ds = await seedDataset(srv, org, 'R ');
    const id = await trigger([ds.rh1, ds.rh2]);
    // the rightsholder is deleted the moment the export reports its first progress
    await db.query(`CREATE OR REPLACE FUNCTION test_delete_rh_mid_export() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN UPDATE rightsholders SET deleted_at = now() WHERE id = '${ds.rh2}' AND deleted_at IS NULL; RETURN NEW; END $$`);
    await db.query(`CREATE TRIGGER test_delete_rh_mid_export AFTER UPDATE OF progress_total ON exports FOR EACH ROW
    WHEN (NEW.status = 'running' AND NEW.id = '${id}') EXECUTE FUNCTION test_delete_rh_mid_export()`);
    t.teardown(() => db.query('DROP TRIGGER test_delete_rh_mid_export ON exports'));
    t.equal(await buildExport(srv.deps, id), 'failed');
    t.match(await status(id), { status: 'failed', errorCode: 'RIGHTSHOLDER_NOT_FOUND' });
    t.same(await objectsUnder(`orgs/${org}/exports/${id}/`), []);
  },
);

t.test(
  "a completed export's files are not handed out once a rightsholder it names is deleted, and the sweep deletes them",
  async (t) => {
    const ds = await seedDataset(srv, org, 'C ');
    const id = await trigger([ds.rh1, ds.rh2]);
    const other = await trigger([ds.rh1]);
    t.equal(await buildExport(srv.deps, id), 'completed');
    t.equal(await buildExport(srv.deps, other), 'completed');
    const [file] = (
      await owner.client.query('export.listFiles', { organizationId: org, exportId: id })
    ).data.files;
    const link = await owner.client.mutate('export.downloadFile', {
      organizationId: org,
      exportId: id,
      fileId: file.id,
    });
    t.equal(link.ok, true);
    t.match(
      await owner.client.mutate('rightsholder.deleteById', { organizationId: org, id: ds.rh2 }),
      { ok: true },
    );
    const due = async (exportId: string) =>
      (
        await db.query<{ due: boolean }>(
          `SELECT run_at <= now() AS due FROM graphile_worker.jobs WHERE key = $1`,
          [`export_expire:${exportId}`],
        )
      ).rows;
    t.same(await due(id), [{ due: true }], 'the deletion expired it at once: its purge is due now');
    t.same(await due(other), [{ due: false }], 'an export not naming it keeps its own expiry');
    t.match(
      await owner.client.mutate('export.downloadFile', {
        organizationId: org,
        exportId: id,
        fileId: file.id,
      }),
      {
        ok: false,
        error: {
          data: { code: 'NOT_FOUND', errorCode: 'EXPORT_EXPIRED' },
          message: /rightsholder it names was deleted/,
        },
      },
    );
    t.same(
      await expireExports(srv.deps),
      { expired: 1, purged: 1 },
      'the sweep finds it, and only it',
    );
    t.match(await status(id), { status: 'expired' });
    t.same(await objectsUnder(`orgs/${org}/exports/${id}/`), []);
    t.equal((await fetch(link.data.url)).status, 404, 'a link handed out before is dead');
    t.match(
      await status(other),
      { status: 'completed' },
      'an export not naming it keeps its files',
    );
    t.equal((await objectsUnder(`orgs/${org}/exports/${other}/`)).length, 1);
  },
);

t.test(
  'a rightsholder flagged deleted (updateById isDeleted) expires the completed exports naming it at once',
  async (t) => {
    const ds = await seedDataset(srv, org, 'G ');
    const id = await trigger([ds.rh1]);
    t.equal(await buildExport(srv.deps, id), 'completed');
    const flagged = await owner.client.mutate('rightsholder.updateById', {
      organizationId: org,
      id: ds.rh1,
      name: 'G Artist One',
      isDeleted: true,
    });
    t.equal(flagged.ok, true, JSON.stringify(flagged));
    t.match(await status(id), { status: 'expired' });
    const { rows } = await db.query<{ due: boolean }>(
      `SELECT run_at <= now() AS due FROM graphile_worker.jobs WHERE key = $1`,
      [`export_expire:${id}`],
    );
    t.same(rows, [{ due: true }]);
    t.same(await expireExports(srv.deps), { expired: 1, purged: 1 });
    t.same(await objectsUnder(`orgs/${org}/exports/${id}/`), []);
  },
);

t.test(
  'retireExportsOf (for the deleting transaction): the exports naming the rightsholder expire at once, their job due now',
  async (t) => {
    const ds = await seedDataset(srv, org, 'D ');
    const id = await trigger([ds.rh1, ds.rh2]);
    t.equal(await buildExport(srv.deps, id), 'completed');
    t.equal(await retireExportsOf(db, org, ds.rh1), 1);
    t.match(await status(id), { status: 'expired' });
    const { rows } = await db.query<{ due: boolean }>(
      `SELECT run_at <= now() AS due FROM graphile_worker.jobs WHERE key = $1`,
      [`export_expire:${id}`],
    );
    t.same(rows, [{ due: true }]);
    t.same(await expireExports(srv.deps), { expired: 1, purged: 1 });
    t.same(await objectsUnder(`orgs/${org}/exports/${id}/`), []);
  },
);

t.test(
  'a deleted statement named in filters.statementIds is STATEMENT_NOT_FOUND (it exported nothing, silently)',
  async (t) => {
    const ds = await seedDataset(srv, org, 'S ');
    await db.query('UPDATE statements SET deleted_at = now() WHERE id = $1', [ds.s1]);
    const res = await owner.client.mutate('export.trigger', {
      organizationId: org,
      type: 'royalty_lines',
      format: 'csv',
      rightsholderIds: [ds.rh1, ds.rh2],
      filters: { statementIds: [ds.s1] },
    });
    t.match(res, {
      ok: false,
      error: { data: { code: 'NOT_FOUND', errorCode: 'STATEMENT_NOT_FOUND', httpStatus: 404 } },
    });
    const statements = await owner.client.mutate('export.trigger', {
      organizationId: org,
      type: 'statements',
      format: 'csv',
      rightsholderIds: [ds.rh1],
      filters: { statementIds: [ds.s1] },
    });
    t.match(statements, { ok: false, error: { data: { errorCode: 'STATEMENT_NOT_FOUND' } } });
  },
);
