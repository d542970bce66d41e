// file.deleteFilesByIds (and a rightsholder's deletion) removes everything stored of the files:
// nothing they leave behind may still show anywhere, the raw values ingestion recorded for the
// lookup reports included.
import t from 'tap';
import {
  createRightsholder,
  insertMapping,
  putFile,
  waitForStatement,
} from '../../helpers/ingest.ts';
import { newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'Delete Label');
const org = owner.organizationId;
const op = (await outsider(srv, org, 'c2_superadmin')).client;
const artist = await createRightsholder(owner.client, org, 'Delete Artist');

const header = ['Period', 'Store', 'Track', 'Qty', 'Net (USD)'];
await insertMapping(srv.deps.pool, org, 'Delete layout', header, {
  stmtYear: { column: 'Period' },
  stmtPeriod: { column: 'Period' },
  stmtCadence: { constant: 'M' },
  currency: { constant: 'USD' },
  royaltyEarnings: { column: 'Net (USD)' },
  units: { column: 'Qty' },
  source: { column: 'Store' },
  rawTitle: { column: 'Track' },
});

t.test(
  'deleting a file removes the raw values it reported: the missing-source report forgets them',
  async (t) => {
    const bytes = Buffer.from(`${header.join(',')}\n2024-05,Quuxtune Radio Hub,Odd Song,7,0.70\n`);
    const up = await putFile(owner.client, org, artist, 'quux.csv', bytes);
    t.equal((await waitForStatement(owner.client, org, up.statementId)).status, 'processed');
    const missing = async () => {
      const res = await op.query('lookupSource.missingSources', {
        pagination: { page: 1, limit: 100 },
      });
      if (!res.ok) throw new Error(JSON.stringify(res.error));
      return res.data.data.filter((r: any) => r.original === 'Quuxtune Radio Hub');
    };
    t.match(await missing(), [
      { original: 'Quuxtune Radio Hub', rowCount: 1, statementCount: 1, organizationCount: 1 },
    ]);

    const del = await owner.client.mutate('file.deleteFilesByIds', {
      organizationId: org,
      uploadId: up.uploadId,
      fileIds: [up.statementId],
    });
    t.same(del.ok && del.data.deleted, [up.statementId]);
    t.same(await missing(), [], 'no longer reported');
    const left = await srv.deps.pool.query(
      'SELECT count(*)::int AS n FROM statement_raw_values WHERE statement_id = $1',
      [up.statementId],
    );
    t.equal(left.rows[0].n, 0, 'no raw value row left behind');
  },
);

t.test("deleting a rightsholder removes its statements' raw values too", async (t) => {
  const gone = await createRightsholder(owner.client, org, 'Departing Artist');
  const bytes = Buffer.from(`${header.join(',')}\n2024-06,Zorblax Stream Box,Odd Song,3,0.30\n`);
  const up = await putFile(owner.client, org, gone, 'zorblax.csv', bytes);
  t.equal((await waitForStatement(owner.client, org, up.statementId)).status, 'processed');
  const rows = async () =>
    (
      await srv.deps.pool.query(
        'SELECT count(*)::int AS n FROM statement_raw_values WHERE statement_id = $1',
        [up.statementId],
      )
    ).rows[0].n;
  t.equal(await rows(), 1);
  const del = await owner.client.mutate('rightsholder.deleteById', {
    organizationId: org,
    id: gone,
  });
  t.equal(del.ok, true, JSON.stringify(del.ok ? null : del.error));
  t.equal(await rows(), 0, 'no raw value row left behind');
});
