// A statement's own footer totals, checked against the sum of its rows (statementFlags'
// footer_total_mismatch): labelled trailers (Apple's Total_Rows/Total_Amount/Total_Units) by their
// label, totals written in any of the formats the rows' amounts are read in, balance lines kept out
// of the comparison (and kept as metadata), the money column found as the mapping finds it. And the
// JavaScript amount reader (src/ingest/amounts.ts) against the normalizer's SQL on the same inputs.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import t from 'tap';
import { readAmount } from '../../src/ingest/amounts.ts';
import type { LocatedTable } from '../../src/ingest/fileTypes.ts';
import { statementFlags } from '../../src/ingest/pipeline.ts';
import type { NormalizeOutput } from '../../workers/normalize.ts';
import { normalizeFile } from '../helpers/normalize.ts';
import { repoRoot } from '../setup/paths.ts';

const H = ['Period', 'Title', 'Units', 'Earnings'];
const FIELDS = {
  stmtYear: { column: 'Period' },
  stmtPeriod: { column: 'Period' },
  stmtCadence: { constant: 'M' },
  currency: { constant: 'USD' },
  royaltyEarnings: { column: 'Earnings' },
  units: { column: 'Units' },
  rawTitle: { column: 'Title' },
};
const ROWS = [
  ['2024-03', 'A', '3', '1.25'],
  ['2024-03', 'B', '2', '0.75'],
  ['2024-03', 'C', '1', '2.10'],
]; // 6 units, 4.10
const NEGATIVE = [
  ['2024-03', 'A', '3', '-1.25'],
  ['2024-03', 'B', '2', '-0.75'],
]; // 5 units, -2.00

const csv = (rows: string[][], d = ',') => rows.map((r) => r.join(d)).join('\n') + '\n';

interface Flag {
  kind: string;
  message: string;
  details?: unknown;
}

/** Locates, normalizes and flags a statement as the pipeline does. */
async function ingest(
  t: { teardown(fn: () => unknown): void },
  content: string,
  fields: Record<string, { column?: string; constant?: string; format?: string }> = FIELDS,
  options: { fileName?: string } = {},
): Promise<{ located: LocatedTable; out: NormalizeOutput; flags: Flag[]; mismatches: unknown[] }> {
  const { located, out } = await normalizeFile(t, content, fields, {
    fileName: options.fileName ?? 'statement.csv',
  });
  const flags = statementFlags(located, out, fields as never);
  return {
    located,
    out,
    flags,
    mismatches: flags.filter((f) => f.kind === 'footer_total_mismatch').map((f) => f.details),
  };
}

const footer = (located: LocatedTable) =>
  located.footerTotals.map((f) => ({ ...f, values: { ...f.values } }));

t.test(
  "Apple's trailer is read by its labels: Total_Amount is the money, Total_Units the units, Total_Rows the rows",
  async (t) => {
    const apple = (
      await readFile(
        path.join(repoRoot, 'fixtures', 'statements', 'apple-80012345_0324_EU.txt'),
        'utf8',
      )
    )
      .trimEnd()
      .split('\n');
    const data = apple.slice(0, 19); // header + 18 rows: 385.17, 96 units
    const fields = {
      stmtYear: { column: 'End Date' },
      stmtPeriod: { column: 'End Date' },
      stmtCadence: { constant: 'M' },
      currency: { column: 'Partner Share Currency' },
      royaltyEarnings: { column: 'Extended Partner Share' },
      units: { column: 'Quantity' },
      rawTitle: { column: 'Title' },
    };
    const trailer = (rows: string, amount: string, units: string) =>
      [...data, `Total_Rows\t${rows}`, `Total_Amount\t${amount}`, `Total_Units\t${units}`].join(
        '\n',
      ) + '\n';
    const opts = { fileName: '80012345_0324_EU.txt' };

    // the fixture's own trailer agrees with its rows
    let r = await ingest(t, trailer('18', '385.17', '96'), fields, opts);
    t.equal(r.out.net, '385.170000000000');
    t.equal(r.out.keptRows, 18);
    t.same(r.mismatches, []);
    t.same(footer(r.located), [
      {
        label: 'Total_Rows',
        values: { 'End Date': '18' },
        kind: 'total',
        value: '18',
        measure: 'rows',
      },
      {
        label: 'Total_Amount',
        values: { 'End Date': '385.17' },
        kind: 'total',
        value: '385.17',
        measure: 'amount',
      },
      {
        label: 'Total_Units',
        values: { 'End Date': '96' },
        kind: 'total',
        value: '96',
        measure: 'units',
      },
    ]);

    // the audit's case: a Total_Amount that disagrees with the rows
    r = await ingest(t, trailer('18', '999.99', '96'), fields, opts);
    t.same(r.mismatches, [
      { label: 'Total_Amount', measure: 'amount', stated: '999.99', computed: '385.170000000000' },
    ]);
    t.equal(
      r.flags.find((f) => f.kind === 'footer_total_mismatch')!.message,
      "The file's total (999.99) differs from the sum of its rows (385.170000000000).",
    );

    // the other two figures are checked too
    r = await ingest(t, trailer('19', '385.17', '97'), fields, opts);
    t.same(r.mismatches, [
      { label: 'Total_Rows', measure: 'rows', stated: '19', computed: '18' },
      { label: 'Total_Units', measure: 'units', stated: '97', computed: '96.000000000000' },
    ]);

    // pre-2010 reports: `Total_Amount:32.68` in one cell
    r = await ingest(t, [...data, 'Total_Amount:385.17'].join('\n') + '\n', fields, opts);
    t.same(footer(r.located), [
      { label: 'Total_Amount', values: {}, kind: 'total', value: '385.17', measure: 'amount' },
    ]);
    t.same(r.mismatches, []);
    r = await ingest(t, [...data, 'Total_Amount:385.18'].join('\n') + '\n', fields, opts);
    t.same(r.mismatches, [
      { label: 'Total_Amount', measure: 'amount', stated: '385.18', computed: '385.170000000000' },
    ]);
  },
);

t.test(
  'labelled totals in other spellings, and totals under their columns as before',
  async (t) => {
    // label in the first cell, its one value in the second (under Title)
    let r = await ingest(
      t,
      csv([H, ...ROWS, ['Total Amount', '4.10'], ['Total Units', '6'], ['Row Count', '3']]),
    );
    t.same(
      footer(r.located).map((f) => [f.label, f.kind, f.measure, f.value]),
      [
        ['Total Amount', 'total', 'amount', '4.10'],
        ['Total Units', 'total', 'units', '6'],
        ['Row Count', 'total', 'rows', '3'],
      ],
    );
    t.equal(r.out.keptRows, 3, 'a Row Count line is footer, not a data row');
    t.same(r.mismatches, []);
    r = await ingest(
      t,
      csv([
        H,
        ...ROWS,
        ['Total Amount', '4.11'],
        ['Units Total', '7'],
        ['Number of rows', '4'],
        ['TOTAL_AMOUNT', '4.10'],
      ]),
    );
    t.same(r.mismatches, [
      { label: 'Total Amount', measure: 'amount', stated: '4.11', computed: '4.100000000000' },
      { label: 'Units Total', measure: 'units', stated: '7', computed: '6.000000000000' },
      { label: 'Number of rows', measure: 'rows', stated: '4', computed: '3' },
    ]);
    t.equal(r.out.keptRows, 3);

    // a total row with its numbers under their columns: the money column (and now the units column)
    r = await ingest(t, csv([H, ...ROWS, ['Total', '', '6', '4.10']]));
    t.same(footer(r.located), [
      { label: 'Total', values: { Units: '6', Earnings: '4.10' }, kind: 'total' },
    ]);
    t.same(r.mismatches, []);
    r = await ingest(t, csv([H, ...ROWS, ['Total', '', '6', '5.10']]));
    t.same(r.mismatches, [
      { label: 'Total', measure: 'amount', stated: '5.10', computed: '4.100000000000' },
    ]);
    r = await ingest(t, csv([H, ...ROWS, ['Total', '', '7', '4.10']]));
    t.same(r.mismatches, [
      { label: 'Total', measure: 'units', stated: '7', computed: '6.000000000000' },
    ]);
    // a labelled row with two numbers is a total under its columns, not one figure
    r = await ingest(t, csv([H, ...ROWS, ['Total Amount', '', '6', '4.20']]));
    t.same(footer(r.located), [
      { label: 'Total Amount', values: { Units: '6', Earnings: '4.20' }, kind: 'total' },
    ]);
    t.same(r.mismatches, [
      { label: 'Total Amount', measure: 'amount', stated: '4.20', computed: '4.100000000000' },
    ]);
    // an unlabelled number under the money column
    r = await ingest(t, csv([H, ...ROWS, ['', '', '', '4.00']]));
    t.same(r.mismatches, [
      { label: '', measure: 'amount', stated: '4.00', computed: '4.100000000000' },
    ]);
  },
);

t.test(
  'the stated total is read as the rows are: decimal commas, minus signs, parentheses, currencies',
  async (t) => {
    // 1000,25 + 234,75 + 2,10 = 1237,10, written with a thousands dot
    const eu = [
      H,
      ['2024-03', 'A', '3', '1000,25'],
      ['2024-03', 'B', '2', '234,75'],
      ['2024-03', 'C', '1', '2,10'],
    ];
    let r = await ingest(t, csv([...eu, ['Grand Total', '', '6', '1.237,10']], ';'));
    t.equal(r.out.net, '1237.100000000000');
    t.same(r.mismatches, []);
    r = await ingest(t, csv([...eu, ['Grand Total', '', '6', 'EUR 1.237,10']], ';'));
    t.same(r.mismatches, [], 'a currency code before a decimal-comma total');
    r = await ingest(t, csv([...eu, ['Grand Total', '', '6', '1.237,11']], ';'));
    t.same(r.mismatches, [
      {
        label: 'Grand Total',
        measure: 'amount',
        stated: '1.237,11',
        computed: '1237.100000000000',
      },
    ]);
    // a labelled total in a decimal-comma file follows the money column, wherever it sits
    r = await ingest(t, csv([...eu, ['Total_Amount', '1.237,10']], ';'));
    t.same(r.mismatches, []);
    r = await ingest(t, csv([...eu, ['Total_Amount', '1237,01']], ';'));
    t.same(r.mismatches, [
      {
        label: 'Total_Amount',
        measure: 'amount',
        stated: '1237,01',
        computed: '1237.100000000000',
      },
    ]);

    for (const stated of [
      '\u22122.00',
      '2.00-',
      '(2.00)',
      '-2',
      '-$2.00',
      '$-2.00',
      'USD -2.00',
      '-2.00 USD',
      '(2.00 USD)',
    ]) {
      r = await ingest(t, csv([H, ...NEGATIVE, ['Total', '', '5', stated]]));
      t.equal(r.out.net, '-2.000000000000');
      t.same(r.mismatches, [], `${stated} is -2.00`);
    }
    for (const [stated, read] of [
      ['9.00-', '-9.00'],
      ['2.00', '2.00'],
      ['(2.01)', '-2.01'],
      ['\u22122.10', '-2.10'],
    ]) {
      r = await ingest(t, csv([H, ...NEGATIVE, ['Total', '', '5', stated!]]));
      t.same(
        r.mismatches,
        [{ label: 'Total', measure: 'amount', stated, computed: '-2.000000000000' }],
        `${stated} (${read}) is not -2.00`,
      );
    }
    // thousands commas and a currency symbol (quoted: the cell holds the delimiter)
    const big = [H, ['2024-03', 'A', '3', '1000.00'], ['2024-03', 'B', '2', '234.50']];
    r = await ingest(t, csv([...big, ['Total', '', '5', '"$1,234.50"']]));
    t.same(r.mismatches, []);
    r = await ingest(t, csv([...big, ['Total', '', '5', '"1,234.50 USD"']]));
    t.same(r.mismatches, []);
    r = await ingest(t, csv([...big, ['Total', '', '5', '"£1,234.55"']]));
    t.same(r.mismatches, [
      { label: 'Total', measure: 'amount', stated: '£1,234.55', computed: '1234.500000000000' },
    ]);

    // the mapping's format wins over the detected one: "1,000" + "2,000" read with a decimal comma are 3
    const ambiguous = csv([
      H,
      ['2024-03', 'A', '1', '"1,000"'],
      ['2024-03', 'B', '1', '"2,000"'],
      ['Total', '', '2', '"3,000"'],
    ]);
    r = await ingest(t, ambiguous);
    t.equal(r.out.net, '3000.000000000000', 'detected: thousands commas');
    t.same(r.mismatches, []);
    r = await ingest(t, ambiguous, {
      ...FIELDS,
      royaltyEarnings: { column: 'Earnings', format: 'decimal_comma' },
    });
    t.equal(r.out.net, '3.000000000000');
    t.same(r.mismatches, [], 'the total is read with the format the rows were read with');
    r = await ingest(t, ambiguous.replace('"3,000"', '"3,001"'), {
      ...FIELDS,
      royaltyEarnings: { column: 'Earnings', format: 'decimal_comma' },
    });
    t.same(r.mismatches, [
      { label: 'Total', measure: 'amount', stated: '3,001', computed: '3.000000000000' },
    ]);
  },
);

t.test(
  'balance lines are statement-level figures: kept, removed as footer, never compared with the rows',
  async (t) => {
    let r = await ingest(
      t,
      csv([
        H,
        ...ROWS,
        ['Total', '', '6', '4.10'],
        ['Balance Brought Forward', '', '', '(12.50)'],
        ['Amount Payable', '', '', '-8.40'],
      ]),
    );
    t.equal(r.out.net, '4.100000000000');
    t.same(r.mismatches, []);
    t.same(footer(r.located), [
      { label: 'Total', values: { Units: '6', Earnings: '4.10' }, kind: 'total' },
      {
        label: 'Balance Brought Forward',
        values: { Earnings: '(12.50)' },
        kind: 'balance',
        value: '(12.50)',
      },
      { label: 'Amount Payable', values: { Earnings: '-8.40' }, kind: 'balance', value: '-8.40' },
    ]);
    t.same(
      r.located.removed.map((x) => x.reason),
      ['footer', 'footer', 'footer'],
    );
    t.same(r.out.dropped, [{ reason: 'footer', rows: 3 }]);

    // every balance spelling, with a Payment line last (once read as a data row)
    const balances = [
      ['Opening balance', '', '', '10.00'],
      ['Closing balance', '', '', '14.10'],
      ['Carried forward', '', '', '14.10'],
      ['Previous Balance', '', '', '1.00'],
      ['Payment', '', '', '-14.10'],
    ];
    r = await ingest(t, csv([H, ...ROWS, ['Total', '', '6', '4.10'], ...balances]));
    t.equal(r.out.keptRows, 3);
    t.equal(r.out.net, '4.100000000000');
    t.same(r.mismatches, []);
    t.same(
      footer(r.located).map((f) => [f.label, f.kind, f.value ?? null]),
      [['Total', 'total', null], ...balances.map((b) => [b[0], 'balance', b[3]])],
    );

    // a wrong total is still caught among balance lines
    r = await ingest(
      t,
      csv([
        H,
        ...ROWS,
        ['Total', '', '6', '4.00'],
        ['Balance Brought Forward', '', '', '(12.50)'],
        ['Amount Payable', '', '', '-8.50'],
      ]),
    );
    t.same(r.mismatches, [
      { label: 'Total', measure: 'amount', stated: '4.00', computed: '4.100000000000' },
    ]);
    // "Total Royalty Payable" is a total
    r = await ingest(t, csv([H, ...ROWS, ['Total Royalty Payable', '', '6', '4.20']]));
    t.equal(r.located.footerTotals[0]!.kind, 'total');
    t.same(r.mismatches, [
      {
        label: 'Total Royalty Payable',
        measure: 'amount',
        stated: '4.20',
        computed: '4.100000000000',
      },
    ]);
  },
);

t.test(
  'the money column is found as the mapping finds it: case and white space do not matter',
  async (t) => {
    let r = await ingest(
      t,
      csv([
        ['Period', 'Title', 'Units', 'EARNINGS'],
        ['2024-03', 'A', '3', '1.25'],
        ['2024-03', 'B', '2', '0.75'],
        ['TOTAL', '', '5', '9.99'],
      ]),
    );
    t.equal(r.out.net, '2.000000000000');
    t.same(r.mismatches, [
      { label: 'TOTAL', measure: 'amount', stated: '9.99', computed: '2.000000000000' },
    ]);
    r = await ingest(
      t,
      csv([
        ['Period', 'Title', 'UNITS', 'Net  Earnings'],
        ['2024-03', 'A', '3', '1.25'],
        ['2024-03', 'B', '2', '0.75'],
        ['TOTAL', '', '6', '2.00'],
      ]),
      {
        ...FIELDS,
        royaltyEarnings: { column: ' net earnings' },
        units: { column: 'units' },
      },
    );
    t.same(r.mismatches, [
      { label: 'TOTAL', measure: 'units', stated: '6', computed: '5.000000000000' },
    ]);
    // and its decimal comma: the stated 1.237,10 and the rows are read with the EARNINGS column's
    // setting, though the mapping names it Earnings
    r = await ingest(
      t,
      csv(
        [
          ['Period', 'Title', 'Units', 'EARNINGS'],
          ['2024-03', 'A', '3', '1000,25'],
          ['2024-03', 'B', '2', '236,85'],
          ['Total', '', '5', '1.237,10'],
        ],
        ';',
      ),
    );
    t.equal(r.located.decimalComma.EARNINGS, true);
    t.equal(r.out.net, '1237.100000000000');
    t.same(r.mismatches, []);
    const flagsFor = (net: string) =>
      statementFlags(r.located, { ...r.out, net }, FIELDS as never)
        .filter((f) => f.kind === 'footer_total_mismatch')
        .map((f) => f.details);
    t.same(flagsFor('1237.000000000000'), [
      { label: 'Total', measure: 'amount', stated: '1.237,10', computed: '1237.000000000000' },
    ]);
  },
);

t.test(
  'readAmount reads every input exactly as the normalizer SQL (parse_amount) does',
  async (t) => {
    // the macros as workers/normalize/amountMacro.ts defines them (a template literal whose only escapes are \\)
    const source = await readFile(
      path.join(repoRoot, 'workers', 'normalize', 'amountMacro.ts'),
      'utf8',
    );
    const start = source.indexOf('const AMOUNT_MACRO = `');
    const macro = source
      .slice(start + 'const AMOUNT_MACRO = `'.length, source.indexOf('`;', start))
      .replace(/\\\\/g, '\\');
    t.match(macro, /CREATE MACRO parse_amount\(s, decimal_comma\)/);
    t.notMatch(macro, /\$\{/, 'no interpolation in the macro text');
    const duck = await (await DuckDBInstance.create(':memory:')).connect();
    t.teardown(() => duck.closeSync());
    await duck.run(macro);

    const Z = '0'.repeat(40);
    const L = '0'.repeat(5_000);
    const N = '9'.repeat(5_000);
    const inputs = [
      '1.25',
      '4.10',
      '-1.25',
      '+1.25',
      '0',
      '-0',
      '-0.00',
      '1,234.50',
      '1.234,50',
      '1.237,10',
      '1237,10',
      '1,25',
      '1,234',
      '1.234',
      '1,234,567.89',
      '1.234.567,89',
      '(12.50)',
      '( 12.50 )',
      '(1,234.50)',
      '12.50-',
      '9.00-',
      '9,00-',
      '9.00 -',
      '\u22122.00',
      '\u2212 2,00',
      '- 2.00',
      '-$2.00',
      '$-2.00',
      '$1,234.50',
      '€1.234,50',
      '£ 3',
      '¥1000',
      'US$12.00',
      'USD 12.00',
      '12.00 USD',
      'EUR 1.237,10',
      '1.237,10 EUR',
      'USD -2.00',
      '-2.00 USD',
      '(2.00 USD)',
      'A1.5',
      '1.5a',
      '1 234,56',
      '1\u00a0234,56',
      "1'234.56",
      '1\u202f234,56',
      '1.2E-05',
      '2E-05',
      '1e3',
      '1E+3',
      '1.5e2',
      '1e-1000',
      '0e1000',
      '1e30',
      '1e25',
      '1e26',
      '1e1_0',
      '1_000',
      '1_000.5',
      '10.123_4',
      '1__0',
      '_1',
      '1_',
      '1._5',
      '.5',
      '5.',
      '-.5',
      '+.5',
      '.',
      '-',
      '--',
      '+-1',
      '--1',
      '1.2.3',
      '1e',
      'e5',
      '1ee2',
      '1e2.5',
      '0x10',
      'inf',
      'nan',
      'NaN',
      'N/A',
      'NA',
      'NULL',
      'none',
      '—',
      '–',
      '#VALUE!',
      '#N/A',
      '1.0000000000005',
      '-1.0000000000005',
      '0.0000000000025',
      '2.5e-12',
      '-2.5e-12',
      '0.00000000000249999',
      '999999.9999999999999',
      '99999999999999999999999999',
      '100000000000000000000000000',
      '99999999999999999999999999.9999999999999',
      '12345678901234567890.123456789012345',
      `0.${Z}1`,
      `${Z}1`,
      `1${Z}`,
      '١٢',
      '１２',
      '85%',
      '-85 %',
      '1,5%',
      '12.50- EUR',
      '12.50 EUR-',
      '1.234,50-€',
      '€ 12,50 -',
      '(12.50)-',
      '12.50 (-)',
      '12.50-(x)',
      '12-5',
      '1.5 - x',
      '1.5E-',
      'x-',
      '-(1.5) EUR-',
      ' 1.25',
      '1.25 ',
      '  (1.25)  ',
      '\t1.5',
      '1.5\n',
      '\v1',
      '1\f',
      '\u00a01',
      '(1\n)',
      '\v(1)',
      '(1)\u00a0',
      'x\n-1',
      '1.5\n-',
      '1.5 \t-',
      '',
      ' ',
      'abc',
      'Total',
      '12 34',
      '1,2,3',
      '1.2,3',
      ',5',
      '5,',
      '1,234.5,6',
      '2024-03-01',
      '03/15/2024',
      // long digit runs (DuckDB reads at most 26 whole and 38 fraction digits: JavaScript's BigInt,
      // quadratic in the length, gets no more): overflow, rounding at the 13th decimal past long
      // tails, a whole part too long for the DECIMAL whatever the exponent, zeros of any length
      `1${L}`,
      `0.${L}1`,
      `0.0000000000005${L}1`,
      `0.0000000000004${N}`,
      `0.0000000000015${L}`,
      `1${L}E-${L.length}`,
      `1${L}.5E-${L.length}`,
      `12${L.slice(0, 24)}.9999999999999${N}`,
      `1${L.slice(0, 26)}E-1`,
      `1${L.slice(0, 25)}E-1`,
      `1${L.slice(0, 25)}.5E-1`,
      `0.${Z}15E41`,
      `0.${N}E38`,
      `-0.0000000000005${L}`,
      `${L}1.25`,
      `${L}`,
      `0.${L}`,
      `1.${N}`,
      `(1.${N})`,
      `9.${N}`,
      `${N.slice(0, 26)}.${N}`,
    ];
    const sql = (s: string) => `'${s.replace(/'/g, "''")}'`;
    let compared = 0;
    for (const decimalComma of [false, true]) {
      const rows = (
        await duck.runAndReadAll(
          `SELECT ${inputs.map((s, i) => `parse_amount(cell(${sql(s)}), ${decimalComma})::VARCHAR AS v${i}`).join(', ')}`,
        )
      ).getRows()[0]!;
      inputs.forEach((s, i) => {
        const expected = rows[i] === null ? null : String(rows[i]);
        const got = readAmount(s, decimalComma);
        if (got !== expected)
          t.fail(
            `${JSON.stringify(s)} (decimal comma ${decimalComma}): JS ${got}, SQL ${expected}`,
          );
        else compared++;
      });
    }
    t.equal(compared, inputs.length * 2, `${compared} readings agree`);
    // spot values, so agreement is not two identical mistakes
    t.equal(readAmount('1.237,10', true), '1237.100000000000');
    t.equal(readAmount('1.237,10', false), '1.237100000000');
    t.equal(readAmount('\u22122.00', false), '-2.000000000000');
    t.equal(readAmount('9.00-', false), '-9.000000000000');
    t.equal(readAmount('12.50- EUR', false), '-12.500000000000');
    t.equal(readAmount('1.234,50 EUR-', true), '-1234.500000000000');
    t.equal(readAmount('12-5', false), '125.000000000000');
    t.equal(readAmount('(12.50)', false), '-12.500000000000');
    t.equal(readAmount('$1,234.50', false), '1234.500000000000');
    t.equal(readAmount('EUR 1.234,50', true), '1234.500000000000');
    t.equal(
      readAmount('0.0000000000025', false),
      '0.000000000003',
      'rounded half away from zero to 12 decimals',
    );
    t.equal(readAmount('1e26', false), null, 'beyond DECIMAL(38,12)');
    t.equal(readAmount('', false), null);
    t.equal(readAmount('N/A', false), null);
  },
);
