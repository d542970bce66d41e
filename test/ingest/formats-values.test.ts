// Values the library's mappings read from real layouts, through the file reader and the
// normalizer, to the cent: BMI's two money columns (the first non-empty one, never both),
// TuneCore's older year/day/month dates, and Beatport's tax percentage on one scale per column.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { fieldSpecSchema } from '../../src/ingest/mappingFields.ts';
import { loadMappingLibrary } from '../../src/ingest/library.ts';
import {
  firstOfMonthYearFirst,
  parseDate,
  parsePeriod,
  yearFirstOrder,
} from '../../src/ingest/values.ts';
import { normalizeStatement } from '../../workers/normalize.ts';
import { locateTable } from '../../workers/statementFile.ts';
import { normalizeFile, normalizeInput, parquetRows, workDir } from '../helpers/normalize.ts';

const library = new Map((await loadMappingLibrary()).map((e) => [e.key, e]));
const entry = (key: string) => library.get(key)!;

/** A delimited file of the headers, with the given cells (the rest empty). */
function file(headers: string[], rows: Record<string, string>[]): string {
  for (const row of rows)
    for (const k of Object.keys(row)) if (!headers.includes(k)) throw new Error(`no column ${k}`);
  const cell = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  return `${[headers.join(','), ...rows.map((r) => headers.map((h) => cell(r[h] ?? '')).join(','))].join('\n')}\n`;
}

t.test(
  'BMI: the earnings are ROYALTY AMOUNT, else CURRENT ACTIVITY AMT where that is the one filled (never both added)',
  async (t) => {
    for (const key of ['bmi', 'bmi-artists']) {
      const bmi = entry(key);
      t.same(
        bmi.fields.royaltyEarnings,
        { columns: ['ROYALTY AMOUNT', 'CURRENT ACTIVITY AMT'], pick: 'first' },
        `${key}: the first non-empty of the two`,
      );
      const base = {
        PERIOD: '20241',
        'PERF PERIOD': '20234',
        'COUNTRY OF PERFORMANCE': 'UNITED STATES',
        'PERF COUNT': '1',
      };
      const rows = [
        { ...base, 'TITLE NAME': 'ONLY ROYALTY', 'ROYALTY AMOUNT': '12.50' },
        { ...base, 'TITLE NAME': 'ONLY CURRENT', 'CURRENT ACTIVITY AMT': '5.00' },
        { ...base, 'TITLE NAME': 'BOTH', 'ROYALTY AMOUNT': '3.25', 'CURRENT ACTIVITY AMT': '3.25' },
        {
          ...base,
          'TITLE NAME': 'ZERO FIRST',
          'ROYALTY AMOUNT': '0.00',
          'CURRENT ACTIVITY AMT': '7.00',
        },
        { ...base, 'TITLE NAME': 'NEITHER' },
        {
          ...base,
          'TITLE NAME': 'N/A FIRST',
          'ROYALTY AMOUNT': 'N/A',
          'CURRENT ACTIVITY AMT': '(1.10)',
        },
        {
          ...base,
          'TITLE NAME': 'UNREADABLE FIRST',
          'ROYALTY AMOUNT': '#VALUE!',
          'CURRENT ACTIVITY AMT': '9.00',
        },
      ];
      const { out, outPath } = await normalizeFile(t, file(bmi.headers, rows), bmi.fields, {
        fileName: 'bmi-statement.csv',
      });
      t.same(
        await parquetRows(outPath, 'raw_title, royalty_earnings::VARCHAR'),
        [
          ['ONLY ROYALTY', '12.500000000000'],
          ['ONLY CURRENT', '5.000000000000'],
          ['BOTH', '3.250000000000'],
          ['ZERO FIRST', '0.000000000000'],
          ['NEITHER', null],
          ['N/A FIRST', '-1.100000000000'],
          ['UNREADABLE FIRST', null],
        ],
        key,
      );
      t.equal(out.net, '19.650000000000', `${key}: 12.50 + 5.00 + 3.25 + 0 - 1.10`);
      t.equal(out.issues.missingAmounts, 1, `${key}: the row with neither`);
      t.equal(
        out.issues.invalidAmounts,
        1,
        `${key}: an unreadable first amount is unreadable, not skipped`,
      );
    }
  },
);

t.test(
  'first non-empty of several columns, for text too; the mapping schema takes pick only with columns',
  async (t) => {
    const mapping = {
      stmtYear: { constant: '2024' },
      stmtPeriod: { constant: '3' },
      stmtCadence: { constant: 'M' },
      currency: { constant: 'USD' },
      royaltyEarnings: { columns: ['Net', 'Net Adj'], pick: 'first' },
      rawArtist: { columns: ['Display Artist', 'Artist'], pick: 'first' },
      rawTitle: { columns: ['Title', 'Version'] },
    };
    const csv =
      'Display Artist,Artist,Title,Version,Net,Net Adj\n,Finn Orla,Ember,Live,1.00,\nHarbour,Finn Orla,Ember,,,2.00\n  ,,Slow,,0.50,0.50\n';
    const { out, outPath } = await normalizeFile(t, csv, mapping, { fileName: 'pick.csv' });
    t.same(await parquetRows(outPath, 'raw_artist, raw_title, royalty_earnings::VARCHAR'), [
      ['Finn Orla', 'Ember Live', '1.000000000000'],
      ['Harbour', 'Ember', '2.000000000000'],
      [null, 'Slow', '0.500000000000'],
    ]);
    t.equal(out.net, '3.500000000000');
    t.ok(fieldSpecSchema.safeParse({ columns: ['A', 'B'], pick: 'first' }).success);
    t.ok(fieldSpecSchema.safeParse({ columns: ['A', 'B'], pick: 'all' }).success);
    for (const spec of [
      { column: 'A', pick: 'first' },
      { constant: '1', pick: 'first' },
      { columns: ['A', 'B'], pick: 'last' },
      { columns: ['A'], pick: 'first', join: '-' },
    ]) {
      t.notOk(fieldSpecSchema.safeParse(spec).success, JSON.stringify(spec));
    }
  },
);

t.test(
  "TuneCore's older year/day/month dates: the order from the whole statement, one reading per column",
  async (t) => {
    t.equal(
      parseDate('2014/15/06'),
      '2014-06-15',
      'a day above 12 in the middle can only be year/day/month',
    );
    t.equal(parseDate('2014/01/05'), '2014-01-05', 'ISO order where nothing says otherwise');
    t.equal(parseDate('2014/01/05', 'YDM'), '2014-05-01');
    t.equal(
      parseDate('2014-06-15', 'YDM'),
      '2014-06-15',
      'a value only one order reads is read so',
    );
    t.equal(parseDate('2014/31/13', 'YDM'), null);
    t.same(parsePeriod('2014/15/06', 'YDM'), {
      year: 2014,
      period: 6,
      cadence: 'M',
      start: '2014-06-01',
      end: '2014-06-30',
    });
    t.equal(yearFirstOrder(['2014/01/05', '2014/15/06']), 'YDM');
    t.equal(yearFirstOrder(['2014/01/05', '2014/06/15']), 'YMD');
    t.equal(yearFirstOrder(['2014/01/05', '2014/02/05']), null, 'every value reads both ways');
    t.equal(
      yearFirstOrder(['2014/15/06', '2014/06/15']),
      null,
      'a column of both orders tells nothing',
    );
    t.equal(yearFirstOrder(['05/01/2014', 'Ember']), null);
    t.ok(fieldSpecSchema.safeParse({ column: 'Posted Date', format: 'YDM' }).success);

    const tc = entry('tunecore');
    const sale = {
      'Store Name': 'Spotify',
      'Country Of Sale': 'UK',
      '# Units Sold': '10',
      'Net Sales': '0.04',
      'Net Sales Currency': 'USD',
      'Exchange Rate': '1',
      Currency: 'USD',
    };
    // an old export: Posted Date 15 June 2014 tells the order; Sales Period (first days of months) reads every way
    const old = [
      {
        ...sale,
        'Sales Period': '2014/01/04',
        'Posted Date': '2014/15/06',
        'Total Earned': '1.25',
      },
      {
        ...sale,
        'Sales Period': '2014/01/05',
        'Posted Date': '2014/15/06',
        'Total Earned': '2.50',
      },
      {
        ...sale,
        'Sales Period': '2014/01/05',
        'Posted Date': '2014/01/06',
        'Total Earned': '0.10',
      },
    ];
    const a = await normalizeFile(t, file(tc.headers, old), tc.fields, {
      fileName: 'tunecore-2014.csv',
    });
    t.same(
      await parquetRows(
        a.outPath,
        'stmt_year, stmt_period, sales_period_start::VARCHAR, sales_period_end::VARCHAR, royalty_earnings::VARCHAR',
      ),
      [
        [2014, 6, '2014-04-01', '2014-04-01', '1.250000000000'],
        [2014, 6, '2014-05-01', '2014-05-01', '2.500000000000'],
        [2014, 6, '2014-05-01', '2014-05-01', '0.100000000000'],
      ],
    );
    t.same(a.out.stmt, { year: 2014, period: 6, cadence: 'M' });
    t.equal(a.out.net, '3.850000000000');
    t.equal(a.out.issues.missingStmtPeriod, 0);

    // today's export, ISO dates: unchanged
    const now = [
      {
        ...sale,
        'Sales Period': '2024-01-05',
        'Posted Date': '2024-03-01',
        'Total Earned': '1.25',
      },
    ];
    const b = await normalizeFile(t, file(tc.headers, now), tc.fields, {
      fileName: 'tunecore.csv',
    });
    t.same(await parquetRows(b.outPath, 'stmt_year, stmt_period, sales_period_start::VARCHAR'), [
      [2024, 3, '2024-01-05'],
    ]);

    // a mapping's format YDM reads even a statement whose every date reads both ways
    const fields = {
      ...tc.fields,
      salesPeriodStart: { column: 'Sales Period', format: 'YDM' },
      stmtYear: { column: 'Posted Date', format: 'YDM' },
      stmtPeriod: { column: 'Posted Date', format: 'YDM' },
    };
    const ambiguous = [
      {
        ...sale,
        'Sales Period': '2014/01/05',
        'Posted Date': '2014/01/06',
        'Total Earned': '1.00',
      },
    ];
    const c = await normalizeFile(t, file(tc.headers, ambiguous), fields, {
      fileName: 'tunecore-2014.csv',
    });
    // (salesPeriodEnd, without a format, follows the order the mapping states for the others)
    t.same(
      await parquetRows(
        c.outPath,
        'stmt_year, stmt_period, sales_period_start::VARCHAR, sales_period_end::VARCHAR',
      ),
      [[2014, 6, '2014-05-01', '2014-05-01']],
    );

    // without it, such a statement is not guessed: it asks for the format (before: read as year/month/day, January)
    const dir = await workDir(t);
    await writeFile(
      path.join(dir, 'original'),
      file(tc.headers, [
        ...ambiguous,
        { ...ambiguous[0]!, 'Sales Period': '2014/03/05', 'Posted Date': '2014/01/06' },
      ]),
    );
    const located = await locateTable({
      sourcePath: path.join(dir, 'original'),
      fileName: 'tunecore-2014.csv',
      workDir: dir,
    });
    if (!located.ok) throw new Error(located.message);
    t.same(await normalizeStatement(normalizeInput(located, tc.fields, dir)), {
      ok: false,
      errorCode: 'DATE_ORDER_AMBIGUOUS',
      message:
        "The dates of column \"Posted Date\" (such as 2014/01/06) read both as year/month/day and as year/day/month, and no date of the statement tells which: set the field's format to 'YMD' or 'YDM' in the mapping.",
    });
    // ISO dates (dashes) are year/month/day: read so
    const iso = [
      {
        ...sale,
        'Sales Period': '2014-01-05',
        'Posted Date': '2014-01-06',
        'Total Earned': '1.00',
      },
    ];
    const d = await normalizeFile(t, file(tc.headers, iso), tc.fields, {
      fileName: 'tunecore.csv',
    });
    t.same(await parquetRows(d.outPath, 'stmt_year, stmt_period, sales_period_start::VARCHAR'), [
      [2014, 1, '2014-01-05'],
    ]);
    // and a slashed date whose day and month are the same number reads one way only
    const same = [
      {
        ...sale,
        'Sales Period': '2014/05/05',
        'Posted Date': '2014/06/06',
        'Total Earned': '1.00',
      },
    ];
    const e = await normalizeFile(t, file(tc.headers, same), tc.fields, {
      fileName: 'tunecore-2014.csv',
    });
    t.same(await parquetRows(e.outPath, 'stmt_year, stmt_period, sales_period_start::VARCHAR'), [
      [2014, 6, '2014-05-05'],
    ]);
    // periods dated on the first of each month as year/month/day (2014/03/01: 1 March, never 3 January) tell
    // the order; the other way round (2014/01/05 as 1 May) is no evidence: any January of daily dates reads so
    t.equal(firstOfMonthYearFirst(['2014/03/01', '2014/02/01', '2014/01/01', 'Ember']), true);
    t.equal(firstOfMonthYearFirst(['2014/03/01', '2014/01/05']), false);
    t.equal(firstOfMonthYearFirst(['2014/01/05', '2014/01/06']), false);
    t.equal(firstOfMonthYearFirst(['2014/01/01', '2014-03-01T00:00']), true);
    t.equal(
      firstOfMonthYearFirst(['2014/01/01']),
      false,
      'a date that reads the same both ways tells nothing',
    );
    const periods = [
      {
        ...sale,
        'Sales Period': '2014/03/01',
        'Posted Date': '2014/05/01',
        'Total Earned': '1.00',
      },
      {
        ...sale,
        'Sales Period': '2014/02/01',
        'Posted Date': '2014/05/01',
        'Total Earned': '2.00',
      },
    ];
    const g = await normalizeFile(t, file(tc.headers, periods), tc.fields, {
      fileName: 'tunecore-2014.csv',
    });
    t.same(await parquetRows(g.outPath, 'stmt_year, stmt_period, sales_period_start::VARCHAR'), [
      [2014, 5, '2014-03-01'],
      [2014, 5, '2014-02-01'],
    ]);
    // a column of first days and other days still asks
    const mixed = path.join(dir, 'mixed');
    await writeFile(
      mixed,
      file(tc.headers, [...periods, { ...periods[0]!, 'Sales Period': '2014/03/05' }]),
    );
    const located2 = await locateTable({
      sourcePath: mixed,
      fileName: 'tunecore-2014.csv',
      workDir: dir,
    });
    if (!located2.ok) throw new Error(located2.message);
    const refused = await normalizeStatement(normalizeInput(located2, tc.fields, dir));
    t.same([refused.ok, !refused.ok && refused.errorCode], [false, 'DATE_ORDER_AMBIGUOUS']);
  },
);

t.test(
  "Beatport's US tax withholding percentage: one scale per column, 30 and 30% both 30 % (0.3)",
  async (t) => {
    const bp = entry('beatport');
    const sale = {
      TRANSACTION_DATE: '2024-03-05',
      TERRITORY: 'GBR',
      TRACK_COUNT: '1',
      NET_CONTENT_REVENUE: '1.00',
    };
    const read = async (percentages: string[]) => {
      const rows = percentages.map((p, i) => ({
        ...sale,
        TRACK_TITLE: `T${i + 1}`,
        'US Tax withholding Percentage': p,
      }));
      const { outPath } = await normalizeFile(t, file(bp.headers, rows), bp.fields, {
        fileName: 'beatport.csv',
      });
      return (await parquetRows(outPath, 'tax_deduction::VARCHAR')).map((r) => r[0]);
    };
    t.same(
      await read(['30', '30%', '0', '', '15.5', '30 %']),
      [
        '0.300000000000',
        '0.300000000000',
        '0.000000000000',
        null,
        '0.155000000000',
        '0.300000000000',
      ],
      'bare numbers in a column of percentages are percentages',
    );
    t.same(
      await read(['30', '0', '15']),
      ['0.300000000000', '0.000000000000', '0.150000000000'],
      'a number above 1: the column is in percent',
    );
    t.same(
      await read(['0.3', '0', '0.15']),
      ['0.300000000000', '0.000000000000', '0.150000000000'],
      'numbers of 0..1 only: the column is fractions',
    );
    t.same(
      await read(['0.3', '30%']),
      ['0.003000000000', '0.300000000000'],
      'a % anywhere: every number of the column is a percentage',
    );
    t.same(
      await read(['-30', '(30)', 'N/A', 'x']),
      ['-0.300000000000', '-0.300000000000', null, null],
      'signs and unreadable cells',
    );

    // the mapping's format says the scale where the values cannot: 1 = 1 %
    const mapping = {
      ...bp.fields,
      taxDeduction: { column: 'US Tax withholding Percentage', format: 'percent' },
    };
    const rows = [
      { ...sale, 'US Tax withholding Percentage': '1' },
      { ...sale, 'US Tax withholding Percentage': '0.5' },
    ];
    const { outPath } = await normalizeFile(t, file(bp.headers, rows), mapping, {
      fileName: 'beatport.csv',
    });
    t.same(await parquetRows(outPath, 'tax_deduction::VARCHAR'), [
      ['0.010000000000'],
      ['0.005000000000'],
    ]);
    const fraction = {
      ...bp.fields,
      taxDeduction: { column: 'US Tax withholding Percentage', format: 'fraction' },
    };
    const f = await normalizeFile(
      t,
      file(bp.headers, [
        { ...sale, 'US Tax withholding Percentage': '30' },
        { ...sale, 'US Tax withholding Percentage': '25%' },
      ]),
      fraction,
      { fileName: 'beatport.csv' },
    );
    t.same(await parquetRows(f.outPath, 'tax_deduction::VARCHAR'), [
      ['30.000000000000'],
      ['0.250000000000'],
    ]);
  },
);
