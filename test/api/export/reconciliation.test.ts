// Every export type's figures equal cube.query's over the same filters, to the last decimal, in
// every format; the files are fetched through the presigned URLs and parsed back.
import t from 'tap';
import { refreshBlock } from '../../../src/catalog/blocks.ts';
import { m } from '../../analytics/helpers.ts';
import { seedDataset } from '../../analytics/dataset.ts';
import { canonicalDecimal } from '../../helpers/decimal.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { downloadAll, readTable, records, runExport, sha256, sumDecimals } from './helpers.ts';

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'Export Reconciliation Org');
const org = owner.organizationId;
const ds = await seedDataset(srv, org);
const rightsholderIds = [ds.rh1, ds.rh2];
// the catalog of both rightsholders, built by the catalog's own block refresh
for (const rh of rightsholderIds) await refreshBlock(srv.deps, org, rh);
const SUMS = [
  'royalty_earnings',
  'gross_royalty_earnings',
  'units',
  'royalty_earnings_usd',
  'gross_royalty_earnings_usd',
];

async function cube(query: Record<string, unknown>): Promise<Record<string, string | null>[]> {
  const res = await owner.client.mutate('cube.query', { organizationId: org, query });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return (res.data as { data: Record<string, string | null>[] }).data;
}

const cubeFilters = (extra: object[] = []) => [
  { member: m('rightsholder_id'), operator: 'equals', values: rightsholderIds },
  ...extra,
];

async function cubeTotals(extra: object[] = []): Promise<Record<string, string | null>> {
  const [row] = await cube({
    measures: [...SUMS, 'statement_row_count'].map(m),
    filters: cubeFilters(extra),
  });
  return Object.fromEntries(
    Object.entries(row!).map(([k, v]) => [k.replace('analytics_full_view.', ''), v]),
  );
}

async function exported(input: Record<string, unknown>) {
  const done = await runExport(owner.client, org, { rightsholderIds, ...input });
  if (done.status !== 'completed')
    throw new Error(`export ${done.status}: ${done.errorCode} ${done.reason}`);
  const files = await downloadAll(owner.client, org, done.id);
  const tables = await Promise.all(files.map((f) => readTable(input.format as string, f.bytes)));
  return { done, files, tables, rows: records(tables) };
}

for (const format of ['csv', 'xlsx', 'parquet'] as const) {
  t.test(`royalty_lines as ${format}: rows, provenance and sums equal cube.query`, async (t) => {
    const { done, files, rows } = await exported({ type: 'royalty_lines', format });
    const totals = await cubeTotals();
    t.equal(done.rowCount, 7);
    t.same(done.progress, { done: 7, total: 7 });
    t.equal(rows.length, Number(totals.statement_row_count));
    for (const s of SUMS)
      t.equal(sumDecimals(rows.map((r) => r[s]!)), totals[s], `${s} = cube ${totals[s]}`);
    t.equal(
      totals.royalty_earnings_usd,
      '162.925',
      '(10.5 + 2.25 - 1 + 0.000000000001) x 1.1 + 150',
    );
    t.equal(
      rows.find((r) => r.track_title_raw === 'Golf')!.royalty_earnings_usd,
      null,
      'the GBP row without a rate is NULL in USD, never converted at 1',
    );
    t.equal(rows.find((r) => r.track_title_raw === 'Golf')!.fx_rate, null);
    // every download is the file listed: bytes, hash, attachment name
    for (const f of files) {
      t.equal(f.bytes.length, f.file.sizeBytes);
      t.equal(sha256(f.bytes), f.file.sha256);
      t.match(f.disposition, new RegExp(`^attachment; filename="${f.file.fileName}"`));
    }
    const alpha = rows.find((r) => r.track_title_raw === 'Alpha')!;
    t.match(alpha, {
      statement_id: ds.s1,
      file_name: 'march-2024.csv',
      custom_name: 'March',
      source_row: '1',
      rightsholder_id: ds.rh1,
      rightsholder_name: 'Artist One',
      distributor_id: ds.d1,
      distributor_name: 'Own Distribution',
      stmt_period_full: '2024M03',
      currency: 'EUR',
      territory_raw: 'United States',
      territory: 'US',
      isrc: 'USAAA2400001',
      sales_period_start: '2024-03-01',
    });
    t.equal(canonicalDecimal(alpha.royalty_earnings!), '10.5');
    t.equal(canonicalDecimal(alpha.fx_rate!), '1.1');
    t.equal(canonicalDecimal(alpha.royalty_earnings_usd!), '11.55');
    const keys = rows.map((r) => `${r.statement_id}|${r.source_row}`);
    t.equal(new Set(keys).size, 7, 'each statement row once, named by statement and source row');
  });

  t.test(`earnings_summary as ${format}: every group equals cube.query's`, async (t) => {
    const { rows } = await exported({ type: 'earnings_summary', format });
    const dims = [
      'rightsholder_id',
      'stmt_period_full',
      'distributor_id',
      'source',
      'territory',
      'currency',
    ];
    const groups = await cube({
      measures: [...SUMS, 'statement_row_count'].map(m),
      dimensions: dims.map(m),
      filters: cubeFilters(),
      limit: 50000,
    });
    const key = (r: Record<string, string | null>, prefix = '') =>
      dims.map((d) => r[prefix + d] ?? '∅').join('|');
    t.equal(rows.length, groups.length);
    const byKey = new Map(rows.map((r) => [key(r), r]));
    for (const g of groups) {
      const row = byKey.get(key(g, 'analytics_full_view.'));
      t.ok(row, key(g, 'analytics_full_view.'));
      if (!row) continue;
      for (const s of SUMS)
        t.equal(
          row[s] === null ? null : canonicalDecimal(row[s]!),
          g[m(s)] ?? null,
          `${key(row)} ${s}`,
        );
      t.equal(row.row_count, g[m('statement_row_count')]);
    }
    const totals = await cubeTotals();
    for (const s of SUMS) t.equal(sumDecimals(rows.map((r) => r[s]!)), totals[s], `total ${s}`);
  });

  t.test(
    `statements as ${format}: the analytics figures of each statement equal cube.query's`,
    async (t) => {
      const { rows } = await exported({ type: 'statements', format });
      t.same(rows.map((r) => r.file_name).sort(), [
        'jan-2024.csv',
        'march-2024.csv',
        'q4-2023.csv',
      ]);
      const per = await cube({
        measures: [m('royalty_earnings'), m('royalty_earnings_usd'), m('statement_row_count')],
        dimensions: [m('statement_id')],
        filters: cubeFilters(),
      });
      for (const p of per) {
        const row = rows.find((r) => r.statement_id === p[m('statement_id')])!;
        t.equal(canonicalDecimal(row.analytics_royalty_earnings!), p[m('royalty_earnings')]);
        t.equal(
          row.analytics_royalty_earnings_usd
            ? canonicalDecimal(row.analytics_royalty_earnings_usd)
            : null,
          p[m('royalty_earnings_usd')],
        );
        t.equal(row.analytics_rows, p[m('statement_row_count')]);
        t.equal(row.status, 'processed');
      }
      const totals = await cubeTotals();
      t.equal(sumDecimals(rows.map((r) => r.analytics_royalty_earnings)), totals.royalty_earnings);
      t.equal(
        sumDecimals(rows.map((r) => r.analytics_royalty_earnings_usd)),
        totals.royalty_earnings_usd,
      );
    },
  );
}

for (const format of ['csv', 'xlsx', 'parquet'] as const) {
  t.test(
    `catalog as ${format}: each rightsholder's musical details sum to cube.query's rows and USD earnings`,
    async (t) => {
      const { rows } = await exported({ type: 'catalog', format });
      const per = await cube({
        measures: [m('royalty_earnings_usd'), m('statement_row_count')],
        dimensions: [m('rightsholder_id')],
        filters: cubeFilters(),
      });
      t.equal(per.length, 2);
      for (const p of per) {
        const mine = rows.filter((r) => r.rightsholder_id === p[m('rightsholder_id')]);
        t.ok(mine.length > 0);
        t.equal(sumDecimals(mine.map((r) => r.row_count)), p[m('statement_row_count')], 'rows');
        t.equal(
          sumDecimals(mine.map((r) => r.earnings_usd)),
          p[m('royalty_earnings_usd')] ?? '0',
          'USD earnings (rows without a rate count, not summed)',
        );
      }
      const alpha = rows.find((r) => r.raw_title === 'Alpha')!;
      t.match(alpha, {
        rightsholder_name: 'Artist One',
        isrc: 'USAAA2400001',
        enrichment_state: /^(pending|fetching|found|not_found|skipped|failed)$/,
        title: /./,
      });
      t.ok(alpha.track_product_id, 'linked to its track product');
    },
  );
}

t.test(
  'catalog: the corrected fields, as the catalog lists them, joined like the other lists (an ignore is no field)',
  async (t) => {
    const details = await owner.client.queryUnchecked('musicalDetails.getMusicalDetails', {
      organizationId: org,
      query: {},
      pagination: { page: 1, limit: 100 },
    });
    if (!details.ok) throw new Error(JSON.stringify(details.error));
    const alpha = details.data.data.find((d: { title: string }) => d.title === 'Alpha');
    const corrected = await owner.client.mutate('musicalDetails.updateResults', {
      organizationId: org,
      resultIds: [alpha.id],
      overrideValues: {
        genres: ['folk', 'pop'],
        title: 'Alpha (Remastered)',
        artist: 'Orla Finn',
        releaseDate: '2020',
      },
    });
    t.same(corrected.ok && corrected.data.data[0]!.overriddenFields, [
      'title',
      'artist',
      'releaseDate',
      'genres',
    ]);
    const ignored = await owner.client.mutate('musicalDetails.ignoreTitles', {
      organizationId: org,
      titles: ['Beta 100%'],
    });
    t.equal(ignored.ok, true);
    const { rows } = await exported({ type: 'catalog', format: 'csv' });
    t.match(
      rows.find((r) => r.raw_title === 'Alpha'),
      {
        title: 'Alpha (Remastered)',
        genres: 'folk; pop',
        overridden_fields: 'title; artist; releaseDate; genres',
        override_count: '1',
      },
    );
    const beta = rows.find((r) => r.raw_title === 'Beta 100%')!;
    t.same([beta.ignored, beta.overridden_fields ?? null], ['true', null]);
  },
);

t.test('filters give the rows cube.query gives with the same filters', async (t) => {
  const cases: { filters: Record<string, unknown>; cube: object[]; rows: number }[] = [
    {
      filters: { statementPeriod: { from: '2024-01', to: '2024-03' } },
      cube: [
        { member: m('stmt_period_month'), operator: 'gte', values: ['2024M01'] },
        { member: m('stmt_period_month'), operator: 'lte', values: ['2024M03'] },
      ],
      rows: 5,
    },
    {
      filters: { territories: ['us'] },
      cube: [{ member: m('territory'), operator: 'equals', values: ['US'] }],
      rows: 3,
    },
    {
      filters: { distributorIds: [ds.d2] },
      cube: [{ member: m('distributor_id'), operator: 'equals', values: [ds.d2] }],
      rows: 2,
    },
    {
      filters: { statementIds: [ds.s1, ds.s3] },
      cube: [{ member: m('statement_id'), operator: 'equals', values: [ds.s1, ds.s3] }],
      rows: 5,
    },
    {
      filters: { statementPeriod: { to: '2023-12' }, territories: ['GB', 'US'] },
      cube: [
        { member: m('stmt_period_month'), operator: 'lte', values: ['2023M12'] },
        { member: m('territory'), operator: 'equals', values: ['GB', 'US'] },
      ],
      rows: 2,
    },
  ];
  for (const c of cases) {
    const { rows } = await exported({ type: 'royalty_lines', format: 'csv', filters: c.filters });
    const totals = await cubeTotals(c.cube);
    t.equal(rows.length, c.rows, JSON.stringify(c.filters));
    t.equal(String(rows.length), totals.statement_row_count ?? '0');
    for (const s of SUMS)
      t.equal(sumDecimals(rows.map((r) => r[s]!)), totals[s], `${JSON.stringify(c.filters)} ${s}`);
    const summary = await exported({
      type: 'earnings_summary',
      format: 'parquet',
      filters: c.filters,
    });
    for (const s of SUMS)
      t.equal(
        sumDecimals(summary.rows.map((r) => r[s]!)),
        totals[s],
        `summary ${JSON.stringify(c.filters)} ${s}`,
      );
  }
});

t.test(
  'decimals are exact: DECIMAL columns in Parquet, numeric cells in XLSX, decimal text in CSV',
  async (t) => {
    const parquet = await exported({ type: 'royalty_lines', format: 'parquet' });
    const types = (parquet.tables[0] as any).types;
    t.equal(types.royalty_earnings, 'DECIMAL(38,12)');
    t.equal(types.royalty_earnings_usd, 'DECIMAL(38,10)');
    t.equal(types.fx_rate, 'DECIMAL(20,14)');
    t.equal(types.source_row, 'BIGINT');
    t.equal(types.sales_period_start, 'DATE');
    const xlsx = await exported({ type: 'royalty_lines', format: 'xlsx' });
    const table = xlsx.tables[0]!;
    const delta = table.rows.findIndex(
      (r) => r[table.columns.indexOf('track_title_raw')] === 'Delta\\Path',
    );
    const col = table.columns.indexOf('royalty_earnings');
    t.equal(table.rows[delta]![col], '0.000000000001');
    t.equal(table.kinds![delta]![col], 'n', 'a numeric cell');
    t.equal(table.kinds![delta]![table.columns.indexOf('track_title_raw')], 's');
    const csv = await exported({ type: 'royalty_lines', format: 'csv' });
    t.equal(
      csv.rows.find((r) => r.track_title_raw === 'Delta\\Path')!.royalty_earnings,
      '0.000000000001',
    );
    t.equal(
      csv.rows.find((r) => r.track_title_raw === 'gamma_x')!.royalty_earnings,
      '-1.000000000000',
      'a negative amount stays a number',
    );
  },
);
