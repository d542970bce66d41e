// The missing-lookup reports count what analytics shows: a statement deleted (upload.uploadAction
// delete), marked bad or skipped, or of a deleted organization keeps its raw values in
// statement_raw_values (a delete can be restored), but its rows, US dollars, statement and
// organization no longer count; restored, they count again.
import t from 'tap';
import {
  createRightsholder,
  insertMapping,
  putFile,
  waitForStatement,
} from '../../helpers/ingest.ts';
import { CURRENCY_REPORT_HEADER, currencyReportFields } from '../../helpers/sampleMapping.ts';
import { newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { data } from '../../lookups/helpers.ts';

const srv = await startTestHandler(t, { jobs: true });
const header = CURRENCY_REPORT_HEADER;
const one = await newOrganization(srv, 'Live Label One');
const two = await newOrganization(srv, 'Live Label Two');
const op = (await outsider(srv, one.organizationId, 'c2_superadmin')).client;

async function ingest(org: typeof one, amount: string): Promise<string> {
  const artist = await createRightsholder(org.client, org.organizationId, `Artist ${amount}`);
  await insertMapping(
    srv.deps.pool,
    org.organizationId,
    `Layout ${amount}`,
    header,
    currencyReportFields,
  );
  const csv = `${header.join(',')}\n2024-08,Plixo Tunes,Vrobble Spin,Song,1,${amount},EUR\n`;
  const up = await putFile(
    org.client,
    org.organizationId,
    artist,
    `live-${amount}.csv`,
    Buffer.from(csv),
  );
  t.equal(
    (await waitForStatement(org.client, org.organizationId, up.statementId)).status,
    'processed',
  );
  return up.statementId;
}

const report = async () => {
  const sources = data(
    await op.query('lookupSource.missingSources', { pagination: { page: 1, limit: 100 } }),
  );
  const salesTypes = data(
    await op.query('lookupSalesType.missingSalesTypes', { pagination: { page: 1, limit: 100 } }),
  );
  const pick = (rows: any[], original: string) =>
    rows
      .filter((r) => r.original === original)
      .map((r) => [r.rowCount, r.usdAmount, r.statementCount, r.organizationCount]);
  return {
    source: pick(sources.data, 'Plixo Tunes'),
    salesType: pick(salesTypes.data, 'Vrobble Spin'),
  };
};

const act = async (org: typeof one, type: string, statementId: string) =>
  data(
    await org.client.mutateUnchecked('upload.uploadAction', {
      organizationId: org.organizationId,
      action: { type, statementId },
    }),
  );

t.test('deleted, bad and deleted organizations do not count; restored statements do', async (t) => {
  // 100 EUR and 10 EUR at the shipped 2024-08-30 rate, 1.1087 US dollars
  const first = await ingest(one, '100');
  const second = await ingest(two, '10');
  t.same(await report(), { source: [[2, '121.957', 2, 2]], salesType: [[2, '121.957', 2, 2]] });

  await act(one, 'delete', first);
  t.same(
    await report(),
    { source: [[1, '11.087', 1, 1]], salesType: [[1, '11.087', 1, 1]] },
    'a deleted statement does not count',
  );
  await act(one, 'restore', first);
  t.same(
    await report(),
    { source: [[2, '121.957', 2, 2]], salesType: [[2, '121.957', 2, 2]] },
    'restored, it counts again',
  );

  await act(two, 'bad', second);
  t.same(
    await report(),
    { source: [[1, '110.87', 1, 1]], salesType: [[1, '110.87', 1, 1]] },
    'a statement marked bad does not count',
  );

  data(await one.client.mutate('organization.delete', { organizationId: one.organizationId }));
  t.same(
    await report(),
    { source: [], salesType: [] },
    'nothing is left: the value is no longer missing anywhere',
  );
  const total = data(
    await op.query('lookupSource.missingSources', { pagination: { page: 1, limit: 1 } }),
  ).pagination.total;
  const all = data(
    await op.query('lookupSource.missingSources', { pagination: { page: 1, limit: 2000 } }),
  );
  t.equal(total, all.data.length, 'the total counts the same groups as the rows');
});
