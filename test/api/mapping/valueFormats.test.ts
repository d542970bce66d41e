// Reading values the library's layouts write, through the real upload, pipeline and API: BMI's
// earnings in either of two money columns (a field reading the first non-empty of several
// columns, `pick: 'first'`), TuneCore's older year/day/month dates (date order YDM), Beatport's tax
// percentage on one scale per column (format percent / fraction); and mapping.create's checks of
// those field options.
import t, { type Test } from 'tap';
import { createRightsholder, putFile, waitForStatement } from '../../helpers/ingest.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { FIELDS, HASH, HEADERS, hostileStrings, libraryMapping } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv);
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Formats Artist');

function file(header: string[], rows: Record<string, string>[]): Buffer {
  for (const row of rows)
    for (const k of Object.keys(row)) if (!header.includes(k)) throw new Error(`no column ${k}`);
  return Buffer.from(
    [header, ...rows.map((r) => header.map((h) => r[h] ?? ''))]
      .map((cells) => cells.join(','))
      .join('\n') + '\n',
  );
}

async function ingest(name: string, bytes: Buffer): Promise<any> {
  const { statementId } = await putFile(owner.client, org, artist, name, bytes);
  return { ...(await waitForStatement(owner.client, org, statementId)), statementId };
}

const sample = async (
  t: Test,
  statementId: string,
  mappingId: string,
  columns: string[],
  endRow = 10,
) =>
  ok(
    t,
    await owner.client.mutate('mapping.processSample', {
      organizationId: org,
      statementId,
      mappingId,
      endRow,
    }),
  ).rows.map((r: any) => columns.map((c) => r[c]));

t.test('BMI: ROYALTY AMOUNT, else CURRENT ACTIVITY AMT; a row with both counts once', async (t) => {
  const bmi = await libraryMapping(t, owner, 'bmi');
  const base = {
    PERIOD: '20241',
    'PERF PERIOD': '20234',
    'COUNTRY OF PERFORMANCE': 'UNITED STATES',
    'PERF COUNT': '2',
  };
  const bytes = file(bmi.headers, [
    { ...base, 'TITLE NAME': 'ROYALTY', 'ROYALTY AMOUNT': '12.50' },
    { ...base, 'TITLE NAME': 'CURRENT', 'CURRENT ACTIVITY AMT': '5.00' },
    { ...base, 'TITLE NAME': 'BOTH', 'ROYALTY AMOUNT': '3.25', 'CURRENT ACTIVITY AMT': '3.25' },
    { ...base, 'TITLE NAME': 'NEITHER' },
  ]);
  const s = await ingest('bmi-royalty-statement-2024Q1.csv', bytes);
  t.equal(s.status, 'processed');
  t.equal(s.mappingId, bmi.id, 'the library mapping');
  t.same([s.stmtYear, s.stmtCadence, s.stmtPeriod], [2024, 'Q', 1]);
  t.equal(
    s.netEarnings,
    '20.750000000000',
    '12.50 + 5.00 + 3.25: the current activity row counts, the row with both once',
  );
  t.same(
    s.currencyTotals.map((c: any) => [c.currency, c.net, c.units]),
    [['USD', '20.750000000000', '8.000000000000']],
  );
  t.same(
    (s.flags ?? [])
      .filter((f: any) => f.kind === 'missing_amounts' || f.kind === 'invalid_amounts')
      .map((f: any) => [f.kind, f.details.rows]),
    [['missing_amounts', 1]],
  );
  t.same(await sample(t, s.statementId, bmi.id, ['raw_title', 'royalty_earnings']), [
    ['ROYALTY', '12.500000000000'],
    ['CURRENT', '5.000000000000'],
    ['BOTH', '3.250000000000'],
    ['NEITHER', null],
  ]);
  // processSample checks a mapping it is given as mapping.create does
  const tried = (royaltyEarnings: unknown) =>
    owner.client.mutate('mapping.processSample', {
      organizationId: org,
      statementId: s.statementId,
      mapping: { ...bmi.fields, royaltyEarnings },
      endRow: 1,
    });
  isError(
    t,
    await tried({ columns: ['ROYALTY AMOUNT', 'CURRENT ACTIVITY AMT'], pick: 'second' }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(
    t,
    await tried({ column: 'ROYALTY AMOUNT', pick: 'first' }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(
    t,
    await tried({ columns: ['ROYALTY AMOUNT', 'NO SUCH AMT'], pick: 'first' }),
    'BAD_REQUEST',
    'MAPPING_COLUMN_MISSING',
  );
  const reversed = ok(
    t,
    await tried({ columns: ['CURRENT ACTIVITY AMT', 'ROYALTY AMOUNT'], pick: 'first' }),
  );
  t.equal(
    reversed.rows[0]!.royalty_earnings,
    '12.500000000000',
    'the other order finds the same single amount',
  );
});

/** A TuneCore sale line's cells other than its dates and earnings. */
const TUNECORE_SALE = {
  'Store Name': 'Spotify',
  'Country Of Sale': 'UK',
  '# Units Sold': '10',
  'Net Sales': '0.04',
  'Net Sales Currency': 'USD',
  'Exchange Rate': '1',
  Currency: 'USD',
};

t.test(
  "TuneCore's older exports: Posted Date 2014/15/06 tells year/day/month for the statement's dates",
  async (t) => {
    const tc = await libraryMapping(t, owner, 'tunecore');
    const bytes = file(tc.headers, [
      {
        ...TUNECORE_SALE,
        'Sales Period': '2014/01/04',
        'Posted Date': '2014/15/06',
        'Total Earned': '1.25',
      },
      {
        ...TUNECORE_SALE,
        'Sales Period': '2014/01/05',
        'Posted Date': '2014/15/06',
        'Total Earned': '2.50',
      },
    ]);
    const s = await ingest('tunecore-sales-2014.csv', bytes);
    t.equal(s.status, 'processed');
    t.equal(s.mappingId, tc.id);
    t.same([s.stmtYear, s.stmtCadence, s.stmtPeriod], [2014, 'M', 6], 'June 2014, not no period');
    t.equal(s.netEarnings, '3.750000000000');
    t.same(await sample(t, s.statementId, tc.id, ['sales_period_start', 'stmt_period']), [
      ['2014-04-01', 6],
      ['2014-05-01', 6],
    ]);
  },
);

t.test(
  'Beatport: the US tax withholding percentage is 30 % whether written 30 or 30%',
  async (t) => {
    const bp = await libraryMapping(t, owner, 'beatport');
    const sale = {
      TRANSACTION_DATE: '2024-03-05',
      TERRITORY: 'GBR',
      TRACK_COUNT: '1',
      NET_CONTENT_REVENUE: '1.00',
    };
    const bytes = file(
      bp.headers,
      ['30', '30%', '0', ''].map((p, i) => ({
        ...sale,
        TRACK_TITLE: `T${i + 1}`,
        'US Tax withholding Percentage': p,
      })),
    );
    const s = await ingest('beatport-2024-03.csv', bytes);
    t.equal(s.status, 'processed');
    t.equal(s.mappingId, bp.id);
    t.equal(s.netEarnings, '4.000000000000');
    t.same(await sample(t, s.statementId, bp.id, ['raw_title', 'tax_deduction']), [
      ['T1', '0.300000000000'],
      ['T2', '0.300000000000'],
      ['T3', '0.000000000000'],
      ['T4', null],
    ]);
  },
);

t.test(
  "processSample's window reads its rows as the pipeline does: a column's scale and date order come from every row",
  async (t) => {
    // the first two rows alone would read as fractions (0.5, 1); the third's 30 makes the column percentages
    const bp = await libraryMapping(t, owner, 'beatport');
    const sale = {
      TRANSACTION_DATE: '2024-03-05',
      TERRITORY: 'GBR',
      TRACK_COUNT: '1',
      NET_CONTENT_REVENUE: '1.00',
    };
    const bytes = file(
      bp.headers,
      ['0.5', '1', '30'].map((p, i) => ({
        ...sale,
        TRACK_TITLE: `W${i + 1}`,
        'US Tax withholding Percentage': p,
      })),
    );
    const s = await ingest('beatport-2024-04.csv', bytes);
    t.equal(s.status, 'processed');
    const all = await sample(t, s.statementId, bp.id, ['raw_title', 'tax_deduction']);
    t.same(all, [
      ['W1', '0.005000000000'],
      ['W2', '0.010000000000'],
      ['W3', '0.300000000000'],
    ]);
    t.same(
      await sample(t, s.statementId, bp.id, ['raw_title', 'tax_deduction'], 2),
      all.slice(0, 2),
      'the first two rows alone: the same values',
    );

    // TuneCore: the first row's dates read both ways; the second's 2014/15/06 says year/day/month
    const tc = await libraryMapping(t, owner, 'tunecore');
    const tcBytes = file(tc.headers, [
      {
        ...TUNECORE_SALE,
        'Sales Period': '2014/01/04',
        'Posted Date': '2014/01/06',
        'Total Earned': '1.25',
      },
      {
        ...TUNECORE_SALE,
        'Sales Period': '2014/01/05',
        'Posted Date': '2014/15/06',
        'Total Earned': '2.50',
      },
    ]);
    const tcs = await ingest('tunecore-sales-2014b.csv', tcBytes);
    t.equal(tcs.status, 'processed');
    const rows = await sample(t, tcs.statementId, tc.id, ['sales_period_start', 'stmt_period']);
    t.same(rows, [
      ['2014-04-01', 6],
      ['2014-05-01', 6],
    ]);
    t.same(
      await sample(t, tcs.statementId, tc.id, ['sales_period_start', 'stmt_period'], 1),
      rows.slice(0, 1),
      'the first row alone: the same dates',
    );
  },
);

t.test('mapping.create and processSample check pick and the new formats', async (t) => {
  const other = await newOrganization(srv, 'Pick Formats');
  const input = { organizationId: other.organizationId, headers: HEADERS, headerHash: HASH };
  const fields = {
    ...FIELDS,
    royaltyEarnings: { columns: ['Net (EUR)', 'Qty'], pick: 'first' as const },
    salesPeriodStart: { column: 'Period', format: 'YDM' as const },
    taxDeduction: { column: 'Qty', format: 'percent' as const },
  };
  const made = ok(t, await other.client.mutate('mapping.create', { ...input, fields }));
  t.same(made.fields, fields, 'stored as given');
  const bad: [string, unknown][] = [
    ['pick without columns', { column: 'Net (EUR)', pick: 'first' }],
    ['an unknown pick', { columns: ['Net (EUR)', 'Qty'], pick: 'last' }],
    ['pick first with join', { columns: ['Net (EUR)', 'Qty'], pick: 'first', join: '+' }],
    ['an unknown format', { column: 'Net (EUR)', format: 'DYM' }],
    ['pick as a number', { columns: ['Net (EUR)', 'Qty'], pick: 1 }],
    ...hostileStrings.map((h): [string, unknown] => [
      `pick ${h}`,
      { columns: ['Net (EUR)', 'Qty'], pick: h },
    ]),
  ];
  for (const [label, spec] of bad) {
    isError(
      t,
      await other.client.mutateUnchecked('mapping.create', {
        ...input,
        fields: { ...FIELDS, royaltyEarnings: spec },
      }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      label,
    );
  }
  // a column the header lacks, among picked columns
  isError(
    t,
    await other.client.mutate('mapping.create', {
      ...input,
      fields: { ...FIELDS, royaltyEarnings: { columns: ['Net (EUR)', 'Gross'], pick: 'first' } },
    }),
    'BAD_REQUEST',
    'MAPPING_COLUMN_UNKNOWN',
  );
});
