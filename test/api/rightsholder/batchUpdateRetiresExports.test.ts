// rightsholder.batchUpdate flagging a rightsholder deleted does to the completed exports naming it
// what updateById does: they expire at once (their files are purged by the export_expire job due
// now), since they hold the data of a rightsholder that is gone. Restoring it does not bring them back.
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import t from 'tap';
import { expireExports } from '../../../src/exports/expire.ts';
import { buildExport } from '../../../src/exports/run.ts';
import { seedDataset } from '../../analytics/dataset.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';

const srv = await startTestHandler(t);
const db = srv.deps.pool;
const owner = await newOrganization(srv, 'Batch Retire Org');
const org = owner.organizationId;

async function objectsUnder(prefix: string): Promise<string[]> {
  const res = await srv.deps.store.client.send(
    new ListObjectsV2Command({ Bucket: srv.deps.store.bucket, Prefix: prefix }),
  );
  return (res.Contents ?? []).map((o) => o.Key!).sort();
}

async function completedExport(rightsholderIds: string[]): Promise<string> {
  const res = await owner.client.mutate('export.trigger', {
    organizationId: org,
    type: 'royalty_lines',
    format: 'csv',
    rightsholderIds,
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  const id = res.data.exportId as string;
  if ((await buildExport(srv.deps, id)) !== 'completed')
    throw new Error('the export did not complete');
  return id;
}

const status = async (exportId: string) =>
  (await owner.client.query('export.status', { organizationId: org, exportId })).data;

t.test(
  'isDeleted: true through batchUpdate expires the completed exports naming the rightsholder at once',
  async (t) => {
    const ds = await seedDataset(srv, org, 'B ');
    const naming = await completedExport([ds.rh1]);
    const other = await completedExport([ds.rh2]);
    t.equal(
      (await objectsUnder(`orgs/${org}/exports/${naming}/`)).length,
      1,
      'the export has its file',
    );
    // a member may flag rightsholders deleted through batchUpdate (its minimum role, as specified)
    const member = await addMember(srv, org, 'member');
    const res = await member.client.mutate('rightsholder.batchUpdate', {
      organizationId: org,
      updates: [{ id: ds.rh1, isDeleted: true }],
    });
    t.equal(res.ok, true, JSON.stringify(res.error));
    t.match(await status(naming), { status: 'expired' });
    const files = await owner.client.query('export.listFiles', {
      organizationId: org,
      exportId: naming,
    });
    t.match(files.data, { status: 'expired', files: [] }, 'no file is listed any more');
    const { rows } = await db.query<{ due: boolean }>(
      `SELECT run_at <= now() AS due FROM graphile_worker.jobs WHERE key = $1`,
      [`export_expire:${naming}`],
    );
    t.same(rows, [{ due: true }], 'its purge is due now');
    t.same(await expireExports(srv.deps), { expired: 1, purged: 1 });
    t.same(await objectsUnder(`orgs/${org}/exports/${naming}/`), []);
    t.match(
      await status(other),
      { status: 'completed' },
      'an export not naming it keeps its files',
    );
    t.equal((await objectsUnder(`orgs/${org}/exports/${other}/`)).length, 1);
  },
);

t.test('a batch that fails rolls the retirement back with everything else', async (t) => {
  const ds = await seedDataset(srv, org, 'R ');
  const naming = await completedExport([ds.rh1]);
  const res = await owner.client.mutate('rightsholder.batchUpdate', {
    organizationId: org,
    updates: [
      { id: ds.rh1, isDeleted: true },
      { id: '00000000-0000-4000-8000-000000000000', name: 'x' },
    ],
  });
  t.equal(res.ok, false);
  t.match(await status(naming), { status: 'completed' });
  const { rows } = await db.query<{ due: boolean }>(
    `SELECT run_at <= now() AS due FROM graphile_worker.jobs WHERE key = $1`,
    [`export_expire:${naming}`],
  );
  t.same(rows, [{ due: false }], 'its expiry job still waits for the retention');
});

t.test(
  'ids in capitals name the stored rightsholders (a uuid is the same in either case)',
  async (t) => {
    const ds = await seedDataset(srv, org, 'C ');
    const naming = await completedExport([ds.rh1]);
    const res = await owner.client.mutate('rightsholder.batchUpdate', {
      organizationId: org,
      updates: [
        { id: ds.rh1.toUpperCase(), isDeleted: true },
        { id: ds.rh2.toUpperCase(), legalName: 'Two Ltd' },
      ],
    });
    t.equal(res.ok, true, JSON.stringify(res.error));
    t.same(
      res.data?.data.map((r: { id: string; isDeleted: boolean; legalName: string | null }) => [
        r.id,
        r.isDeleted,
        r.legalName,
      ]),
      [
        [ds.rh1, true, null],
        [ds.rh2, false, 'Two Ltd'],
      ],
    );
    t.match(await status(naming), { status: 'expired' });
  },
);
