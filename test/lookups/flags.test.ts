// The unknown_sales_types / unknown_sources flags of processed statements follow the lookup
// tables: an entry created for an unknown value takes it off the flag (the flag goes with the
// last one), a deleted entry brings it back, a flag the user resolved stays resolved.
import t from 'tap';
import { syncLookupFlags } from '../../src/lookups/flags.ts';
import { createRightsholder, insertMapping, putFile, waitForStatement } from '../helpers/ingest.ts';
import { CURRENCY_REPORT_HEADER, currencyReportFields } from '../helpers/sampleMapping.ts';
import { newOrganization, outsider } from '../helpers/principals.ts';
import { startTestHandler } from '../helpers/handler.ts';
import { addJobUnchecked } from '../helpers/jobs.ts';

const srv = await startTestHandler(t, { jobs: true });
const pool = srv.deps.pool;
const owner = await newOrganization(srv, 'Unknown Lookups Label');
const org = owner.organizationId;
const op = (await outsider(srv, org, 'c2_superadmin')).client;
const artist = await createRightsholder(owner.client, org, 'Unknown Lookups Artist');
const header = CURRENCY_REPORT_HEADER;
await insertMapping(pool, org, 'Unknown lookups layout', header, currencyReportFields);

const lookupFlags = async (statementId: string) =>
  (
    await pool.query<{
      kind: string;
      message: string;
      values: string[];
      resolved: boolean;
      shown: boolean;
    }>(
      `SELECT kind, message, details -> 'values' AS values, resolved, shown FROM statement_flags
       WHERE statement_id = $1 AND kind IN ('unknown_sales_types', 'unknown_sources') ORDER BY kind`,
      [statementId],
    )
  ).rows;

const ingest = async (name: string, rows: string[]) => {
  const up = await putFile(
    owner.client,
    org,
    artist,
    name,
    Buffer.from(`${[header.join(','), ...rows].join('\n')}\n`),
  );
  t.equal((await waitForStatement(owner.client, org, up.statementId)).status, 'processed', name);
  return up.statementId;
};

t.test(
  'a lookup entry created for an unknown source takes it off the flag; deleting it brings it back',
  async (t) => {
    const statement = await ingest('unknown.csv', [
      '2024-08,Qzzv Radio,Streaming,Song A,1,10,USD',
      '2024-08,Wxxk Radio,Streaming,Song B,1,5,USD',
    ]);
    const [flag] = await lookupFlags(statement);
    t.match(flag, {
      kind: 'unknown_sources',
      values: ['Qzzv Radio', 'Wxxk Radio'],
      resolved: false,
    });
    // the user hides it: that stays through the changes below
    await pool.query(
      `UPDATE statement_flags SET shown = false WHERE statement_id = $1 AND kind = 'unknown_sources'`,
      [statement],
    );
    t.equal(
      await syncLookupFlags(pool, { force: true }),
      0,
      'nothing to change while the tables say the same',
    );

    const created = await op.mutate('lookupSource.create', {
      original: 'Qzzv Radio',
      earningsSource: 'Qzzv',
      status: 'verified',
    });
    t.equal(created.ok, true, JSON.stringify(created));
    // (the runner's own minute job may get there first: what counts is the flag)
    await syncLookupFlags(pool);
    t.same(await lookupFlags(statement), [
      {
        kind: 'unknown_sources',
        message: 'Sources without a lookup entry: Wxxk Radio.',
        values: ['Wxxk Radio'],
        resolved: false,
        shown: false,
      },
    ]);
    t.equal(await syncLookupFlags(pool), null, 'unchanged tables are not read again');

    const second = await op.mutate('lookupSource.create', {
      original: 'WXXK radio',
      earningsSource: 'Wxxk',
      status: 'verified',
    });
    t.equal(second.ok, true);
    await syncLookupFlags(pool);
    t.same(await lookupFlags(statement), [], 'every source resolves: the flag went');

    t.equal((await op.mutate('lookupSource.delete', { id: (created as any).data.id })).ok, true);
    await syncLookupFlags(pool);
    t.same(await lookupFlags(statement), [
      {
        kind: 'unknown_sources',
        message: 'Sources without a lookup entry: Qzzv Radio.',
        values: ['Qzzv Radio'],
        resolved: false,
        shown: true,
      },
    ]);
  },
);

t.test(
  'a resolved flag, a deleted statement and a statement being reprocessed are left alone',
  async (t) => {
    const resolved = await ingest('resolved.csv', ['2024-08,Yqqp Radio,Streaming,Song C,1,10,USD']);
    const deleted = await ingest('deleted.csv', ['2024-08,Yqqp Radio,Streaming,Song D,1,10,USD']);
    const pending = await ingest('pending.csv', ['2024-08,Yqqp Radio,Streaming,Song E,1,10,USD']);
    await pool.query(
      `UPDATE statement_flags SET resolved = true WHERE statement_id = $1 AND kind = 'unknown_sources'`,
      [resolved],
    );
    await pool.query('UPDATE statements SET deleted_at = now() WHERE id = $1', [deleted]);
    await pool.query(`UPDATE statements SET status = 'uploaded' WHERE id = $1`, [pending]);
    const before = await Promise.all([resolved, deleted, pending].map(lookupFlags));
    t.equal(
      (
        await op.mutate('lookupSource.create', {
          original: 'Yqqp Radio',
          earningsSource: 'Yqqp',
          status: 'verified',
        })
      ).ok,
      true,
    );
    t.equal(await syncLookupFlags(pool, { force: true }), 0);
    t.same(await Promise.all([resolved, deleted, pending].map(lookupFlags)), before);
    t.equal(before[0]![0]!.resolved, true);
    t.equal(before[1]![0]!.values[0], 'Yqqp Radio');
  },
);

t.test('sales types alike, through the job the runner schedules every minute', async (t) => {
  const statement = await ingest('types.csv', ['2024-08,Spotify,Vvqq Usage,Song F,1,10,USD']);
  t.match(await lookupFlags(statement), [{ kind: 'unknown_sales_types', values: ['Vvqq Usage'] }]);
  t.equal(
    (
      await op.mutate('lookupSalesType.create', {
        original: 'Vvqq Usage',
        cleansed: 'Vvqq',
        status: 'verified',
      })
    ).ok,
    true,
  );
  await addJobUnchecked(srv.deps.pool, 'statement_lookup_flags', {});
  const deadline = Date.now() + 30_000;
  while ((await lookupFlags(statement)).length > 0 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 200));
  t.same(await lookupFlags(statement), []);
});
