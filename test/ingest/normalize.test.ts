// The normalizer's two CSV readings: DuckDB's strict reader first, the lenient one for files it
// refuses. Both must give the same cells, literal quote characters included (a title of 12").
// And the statement's issue counts, which become its flags.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import ExcelJS from 'exceljs';
import t from 'tap';
import { computeHeaderHash } from '../../workers/headerHash.ts';
import { locateTable } from '../../workers/statementFile.ts';
import { normalizeStatement, type NormalizeOutput } from '../../workers/normalize.ts';
import { connectionsOpened } from '../../workers/duckdb.ts';
import { SMALL_FILE_BYTES } from '../../workers/normalize/plan.ts';
import { loadMappingLibrary } from '../../src/ingest/library.ts';
import { normalizeFile, normalizeInput, parquetRows } from '../helpers/normalize.ts';

// many normalizer runs of real files, each a DuckDB plan: past tap's 300 s on a busy 2-core machine
t.setTimeout(600_000);

const HEADER = ['Period', 'Title', 'Artist', 'Earnings (USD)'];
const fields = {
  stmtYear: { column: 'Period' },
  stmtPeriod: { column: 'Period' },
  stmtCadence: { constant: 'M' },
  currency: { constant: 'USD' },
  royaltyEarnings: { column: 'Earnings (USD)' },
  rawTitle: { column: 'Title' },
  rawArtist: { column: 'Artist' },
};

async function normalizeText(
  t: { teardown(fn: () => unknown): void },
  text: string,
  mapping: Record<string, unknown> = fields,
): Promise<{ rows: string[][]; net: string | null; out: NormalizeOutput }> {
  const { out, outPath } = await normalizeFile(t, text, mapping);
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  const read = await duck.runAndReadAll(
    `SELECT source_row::VARCHAR, raw_title, raw_artist, royalty_earnings::VARCHAR FROM read_parquet('${outPath}') ORDER BY source_row`,
  );
  duck.closeSync();
  return { rows: read.getRows() as string[][], net: out.net, out };
}

const lines = [
  '2024-03\tSummer 12" Mix\tOrla Finn\t1.25',
  '2024-03\t"Live" at Home\tOrla Finn\t0.50',
  '2024-03\tPlain\tOrla Finn\t2.00',
];
const expected = [
  ['1', 'Summer 12" Mix', 'Orla Finn', '1.250000000000'],
  ['2', '"Live" at Home', 'Orla Finn', '0.500000000000'],
  ['3', 'Plain', 'Orla Finn', '2.000000000000'],
];

t.test('a well-formed tab file with literal quotes: the strict reading keeps them', async (t) => {
  const r = await normalizeText(t, `${HEADER.join('\t')}\n${lines.join('\n')}\n`);
  t.same(r.rows, expected);
  t.equal(r.net, '3.750000000000');
});

t.test(
  'a ragged tab file the strict reader refuses: the lenient reading keeps the same cells',
  async (t) => {
    // the second row carries a stray extra cell, which strict CSV reading refuses
    const ragged = [lines[0], `${lines[1]}\textra`, lines[2]];
    const r = await normalizeText(t, `${HEADER.join('\t')}\n${ragged.join('\n')}\n`);
    t.same(r.rows, expected);
    t.equal(r.net, '3.750000000000');
  },
);

t.test(
  'issue counts: unreadable and empty amounts, invalid identifiers, unknown currencies and territories, missing periods',
  async (t) => {
    const header = ['Period', 'Title', 'ISRC', 'UPC', 'Currency', 'Country', 'Earnings'];
    const rows = [
      ['2024-03', 'Ok', 'USRC17607839', '036000291452', 'USD', 'US', '1.50'],
      ['2024-03', 'Bad amount', 'US-RC1-76-07839', '036000291452', 'EUR', 'DE', '#VALUE!'],
      ['2024-03', 'Empty amount', 'NOT AN ISRC', '123', 'usd', 'Atlantis', ''],
      ['', 'No period', 'XX', '', 'Zorkmids', 'FR', '2.25'],
      ['2024-03', 'Bad currency', '', '', 'Zorkmids', 'Narnia', '(0.75)'],
    ];
    const mapping = {
      stmtYear: { column: 'Period' },
      stmtPeriod: { column: 'Period' },
      stmtCadence: { constant: 'M' },
      currency: { column: 'Currency' },
      country: { column: 'Country' },
      isrc: { column: 'ISRC' },
      upc: { column: 'UPC' },
      royaltyEarnings: { column: 'Earnings' },
      rawTitle: { column: 'Title' },
    };
    const { out } = await normalizeText(
      t,
      `${[header, ...rows].map((r) => r.join('\t')).join('\n')}\n`,
      mapping,
    );
    t.equal(out.keptRows, 5);
    // rows in EUR, USD and an unknown currency: no single net, totals per currency (amounts never added across currencies)
    t.equal(out.net, null);
    t.same(out.perCurrency, [
      { currency: 'EUR', rows: 1, net: null, gross: null, units: null },
      { currency: 'USD', rows: 2, net: '1.500000000000', gross: null, units: null },
      { currency: null, rows: 2, net: '1.500000000000', gross: null, units: null },
    ]);
    t.same(out.issues, {
      invalidAmounts: 1,
      missingAmounts: 1,
      invalidIsrc: 2,
      invalidUpc: 1,
      missingStmtPeriod: 1,
      unknownCountries: ['Atlantis', 'Narnia'],
      unknownCurrencies: ['Zorkmids'],
      extraCells: 0,
    });
    // amounts summed over two columns: an empty or unreadable part counts as 0, never as an invalid row
    const summed = await normalizeText(
      t,
      `${[...HEADER, 'Adjustment (USD)'].join('\t')}\n2024-03\tx\tOrla Finn\t1.00\tn/a\n2024-03\ty\tOrla Finn\t\t\n`,
      {
        ...fields,
        royaltyEarnings: { columns: ['Earnings (USD)', 'Adjustment (USD)'] },
      },
    );
    t.equal(summed.out.net, '1.000000000000');
    t.equal(summed.out.issues.invalidAmounts, 0);
    t.equal(summed.out.issues.missingAmounts, 1);
  },
);

t.test(
  'cells saying there is no amount are empty, not unreadable; Excel error values are unreadable',
  async (t) => {
    const amounts = [
      '1.25',
      'N/A',
      'n/a',
      '-',
      ' - ',
      '—',
      '–',
      'NULL',
      'none',
      '#N/A',
      '#VALUE!',
      'abc',
      '',
      '-2.00',
    ];
    const text = `${HEADER.join('\t')}\n${amounts.map((a, i) => `2024-03\tT${i}\tA\t${a}`).join('\n')}\n`;
    const { out } = await normalizeText(t, text);
    t.equal(out.keptRows, amounts.length);
    t.equal(out.net, '-0.750000000000', 'one currency: one net');
    t.same(
      { invalid: out.issues.invalidAmounts, missing: out.issues.missingAmounts },
      { invalid: 3, missing: 9 },
      '#N/A, #VALUE! and abc are unreadable',
    );
  },
);

t.test(
  'zero-width characters in a header do not change its name: the same hash, the same columns',
  async (t) => {
    const dir = await mkdtemp(path.join(tmpdir(), 'royalty-zw-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'statement.tsv');
    await writeFile(
      file,
      `\u200bPeriod\tTitle\u200d\tArtist\tEarnings (USD)\u2060\n2024-03\tSong\tOrla\t1.10\n`,
    );
    const located = await locateTable({
      sourcePath: file,
      fileName: 'statement.tsv',
      workDir: dir,
    });
    if (!located.ok) throw new Error(located.message);
    t.equal(located.headerHash, computeHeaderHash(HEADER));
    const out = await normalizeStatement(normalizeInput(located, fields, dir));
    t.match(out, { ok: true, keptRows: 1, net: '1.100000000000' });
  },
);

t.test(
  'the written rows keep the file order and each its own looked-up values, across chunks, threads and dropped rows',
  async (t) => {
    // values read once per distinct value (ISRC, territory, period) are looked up for every row: rows
    // whose cell is empty sit between rows whose cell is not, over several of DuckDB's row groups (so
    // the written pass runs on several threads), with and without a row dropped in the middle
    const header = ['Period', 'Title', 'ISRC', 'Country', 'Earnings'];
    const n = 150_000;
    const isrcOf = (i: number) =>
      i % 3 === 0
        ? ''
        : i % 3 === 1
          ? `USRC1${String(i % 9_000).padStart(7, '0')}`
          : `us-rc1-${String(i % 7_000).padStart(7, '0')}`;
    const countryOf = (i: number) => (i % 5 === 0 ? '' : ['US', 'de', 'Narnia', 'FRA'][i % 4]!);
    const periodOf = (i: number) => (i % 7 === 0 ? '' : `2024-0${1 + (i % 9)}`);
    const body: string[] = [];
    for (let i = 1; i <= n; i++)
      body.push([periodOf(i), `T${i}`, isrcOf(i), countryOf(i), `${i % 100}.01`].join('\t'));
    const mapping = {
      stmtYear: { column: 'Period' },
      stmtPeriod: { column: 'Period' },
      stmtCadence: { constant: 'M' },
      currency: { constant: 'USD' },
      country: { column: 'Country' },
      isrc: { column: 'ISRC' },
      royaltyEarnings: { column: 'Earnings' },
      rawTitle: { column: 'Title' },
    };
    const expectedIsrc = (i: number) =>
      i % 3 === 0 ? null : i % 3 === 1 ? isrcOf(i) : isrcOf(i).replace(/-/g, '').toUpperCase();
    const expectedCountry = (i: number) => (i % 5 === 0 ? null : ['US', 'DE', null, 'FR'][i % 4]!);
    for (const [name, text, titleOf] of [
      ['every row data', `${header.join('\t')}\n${body.join('\n')}\n`, (r: number) => r],
      // a blank line after the 1000th data row (dropped): source_row counts data records, not lines,
      // so it still equals the title's number
      [
        'a blank line in the middle',
        `${header.join('\t')}\n${body.slice(0, 1000).join('\n')}\n\n${body.slice(1000).join('\n')}\n`,
        (r: number) => r,
      ],
      // dropped rows in the middle, numbered around: a few, and many
      [
        'the header repeated twice',
        [
          header,
          ...body.slice(0, 50_000),
          header,
          ...body.slice(50_000, 110_000),
          header,
          ...body.slice(110_000),
        ]
          .map((l) => (Array.isArray(l) ? l.join('\t') : l))
          .join('\n') + '\n',
        (r: number) => r,
      ],
      [
        'the header repeated every 2,000 rows',
        [header, ...body.flatMap((l, i) => (i > 0 && i % 2_000 === 0 ? [header, l] : [l]))]
          .map((l) => (Array.isArray(l) ? l.join('\t') : l))
          .join('\n') + '\n',
        (r: number) => r,
      ],
    ] as const) {
      const { out, outPath } = await normalizeFile(t, text, mapping, { extra: { threads: 2 } });
      t.equal(out.keptRows, n, name);
      const duck = await (await DuckDBInstance.create(':memory:')).connect();
      const read = await duck.runAndReadAll(
        `SELECT file_row_number, source_row, raw_title, isrc, country, stmt_period FROM read_parquet('${outPath}', file_row_number=true) ORDER BY file_row_number`,
      );
      duck.closeSync();
      const rows = read.getRows();
      let misplaced = 0;
      let wrong = 0;
      for (const [position, sourceRow, title, isrc, country, period] of rows) {
        const r = Number(sourceRow);
        const i = titleOf(r);
        if (Number(position) + 1 !== r) misplaced++;
        if (
          title !== `T${i}` ||
          isrc !== expectedIsrc(i) ||
          country !== expectedCountry(i) ||
          period !== (i % 7 === 0 ? null : 1 + (i % 9))
        )
          wrong++;
      }
      t.equal(rows.length, n, `${name}: every row written`);
      t.equal(misplaced, 0, `${name}: the n-th written row is source_row n`);
      t.equal(wrong, 0, `${name}: each row has its own title, ISRC, territory and period`);
    }
  },
);

/** A statement's outputs, written by two readers (as the pipeline does for a large file) and by one. */
async function splitAndWhole(
  t: { teardown(fn: () => unknown): void },
  text: string,
  mapping: Record<string, unknown>,
) {
  const dir = await mkdtemp(path.join(tmpdir(), 'royalty-normalize-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'statement.tsv');
  await writeFile(file, text);
  const located = await locateTable({ sourcePath: file, fileName: 'statement.tsv', workDir: dir });
  if (!located.ok) throw new Error(located.message);
  const run = async (name: string, splitOffset: number | undefined) => {
    await mkdir(path.join(dir, name));
    const outPath = path.join(dir, name, 'normalized.parquet');
    const opened = connectionsOpened();
    const out = await normalizeStatement(
      normalizeInput(located, mapping, path.join(dir, name), { splitOffset }),
    );
    if (!out.ok) throw new Error(out.message);
    const { timings: _timings, ...figures } = out;
    return {
      outPath,
      figures,
      removed: await readFile(path.join(dir, name, 'removed.csv'), 'utf8'),
      connections: connectionsOpened() - opened,
    };
  };
  const split = await run('split', located.splitOffset);
  const whole = await run('whole', undefined);
  const again = await run('again', located.splitOffset);
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  const count = async (sql: string) => Number((await duck.runAndReadAll(sql)).getRows()[0]![0]);
  const differing = await count(`SELECT count(*) FROM (
      (SELECT * FROM read_parquet('${split.outPath}', file_row_number=true) EXCEPT ALL SELECT * FROM read_parquet('${whole.outPath}', file_row_number=true))
      UNION ALL
      (SELECT * FROM read_parquet('${whole.outPath}', file_row_number=true) EXCEPT ALL SELECT * FROM read_parquet('${split.outPath}', file_row_number=true)))`);
  const misplaced = await count(
    `SELECT count(*) FROM read_parquet('${split.outPath}', file_row_number=true) WHERE source_row <> file_row_number + 1`,
  );
  duck.closeSync();
  return {
    located,
    split,
    whole,
    differing,
    misplaced,
    sameBytes: (await readFile(split.outPath)).equals(await readFile(again.outPath)),
  };
}

t.test(
  'a large statement written by two readers gives the rows, figures and removed rows of one, and the same bytes when run again',
  async (t) => {
    const n = 600_000;
    const body: string[] = [];
    for (let i = 1; i <= n; i++)
      body.push(
        [
          `2024-0${1 + (i % 9)}`,
          `T${i}`,
          i % 4 === 0 ? '' : `USRC1${String(i % 5_000).padStart(7, '0')}`,
          `${i % 1000}.${i % 7}5`,
        ].join('\t'),
      );
    const header = 'Period\tTitle\tISRC\tEarnings (USD)';
    const { rawArtist: _artist, ...mapping } = { ...fields, isrc: { column: 'ISRC' } };
    // the header repeated in the first half, a blank row in each half, blank rows and a total row at the end
    const text =
      [
        header,
        ...body.slice(0, 100_000),
        header,
        ...body.slice(100_000, 200_000),
        '\t\t\t',
        ...body.slice(200_000, 450_000),
        ' \t \t\t',
        ...body.slice(450_000),
        '\t\t\t',
        'Total\t\t\t99.99',
        '\t\t\t',
      ].join('\n') + '\n';
    const r = await splitAndWhole(t, text, mapping);
    t.ok(
      r.located.splitOffset !== undefined && r.located.splitOffset >= text.length / 2,
      'the file reader offers a second reader a record in the second half',
    );
    t.equal(r.split.figures.keptRows, n);
    t.equal(
      r.split.figures.dataRows,
      n + 6,
      'the rows read: data, a repeated header, four blank rows and the total',
    );
    t.same(r.split.figures.dropped, [
      { reason: 'blank', rows: 4 },
      { reason: 'footer', rows: 1 },
      { reason: 'repeated_header', rows: 1 },
    ]);
    t.same(r.split.figures, r.whole.figures, 'the same figures');
    t.equal(r.split.removed, r.whole.removed, 'the same removed rows');
    t.match(
      r.split.removed,
      /\n600005,footer,Total,,,99.99\n/,
      'the total row, numbered among all rows read',
    );
    t.equal(r.differing, 0, 'the same rows in the same places');
    t.equal(r.misplaced, 0, 'in file order');
    t.ok(r.sameBytes, 'the same bytes when run again');
    t.equal(r.split.connections, 2, 'two readers, a connection each');
    t.equal(r.whole.connections, 1, 'one reader, one connection');
  },
);

t.test(
  'two readers: only data rows, line breaks inside quotes, a row the strict reader refuses',
  async (t) => {
    const n = 200_000;
    const rows = Array.from(
      { length: n },
      (_, i) => `2024-03,Track ${i + 1},Orla Finn,${(i % 100) / 4}`,
    );
    const plain = await splitAndWhole(
      t,
      `Period,Title,Artist,Earnings (USD)\n${rows.join('\n')}\n`,
      fields,
    );
    t.ok(plain.located.splitOffset !== undefined);
    t.equal(plain.split.figures.keptRows, n);
    t.equal(plain.split.figures.net, '2475000.000000000000');
    t.same(plain.split.figures, plain.whole.figures);
    t.equal(plain.differing + plain.misplaced, 0);
    t.ok(plain.sameBytes);
    // titles over two lines in both halves: records are not lines, and DuckDB's parallel reader,
    // which cannot pad short rows across such line breaks, gives way to its serial one
    rows[10] = `2024-03,"Track 11\n(Live)",Orla Finn,2.50`;
    rows[150_000] = `2024-03,"Track 150001\n(Live)",Orla Finn,0.00`;
    const quoted = await splitAndWhole(
      t,
      `Period,Title,Artist,Earnings (USD)\n${rows.join('\n')}\n`,
      fields,
    );
    t.ok(quoted.located.splitOffset !== undefined);
    t.equal(quoted.split.figures.keptRows, n);
    t.equal(quoted.split.figures.net, '2475000.000000000000');
    t.equal(quoted.differing + quoted.misplaced, 0);
    // a row with a stray extra cell in the second half: the strict reader refuses it only when the
    // rows are written, and the statement is read again, from the start, by the lenient one
    rows[10] = '2024-03,Track 11,Orla Finn,2.50';
    rows[150_000] = '2024-03,Track 150001,Orla Finn,0.00,extra';
    const ragged = await splitAndWhole(
      t,
      `Period,Title,Artist,Earnings (USD)\n${rows.join('\n')}\n`,
      fields,
    );
    t.ok(ragged.located.splitOffset !== undefined);
    t.equal(ragged.split.figures.keptRows, n);
    t.equal(ragged.split.figures.net, '2475000.000000000000');
    t.equal(ragged.differing + ragged.misplaced, 0);
  },
);

t.test('a percentage is its fraction: 85% is 0.85, in either decimal notation', async (t) => {
  const rates = ['85%', '0.85', '12.5 %', '(5%)', '100', '0.000000000001%'];
  const text = `${[...HEADER, 'Rate'].join('\t')}\n${rates.map((r, i) => `2024-03\tT${i}\tA\t1.00\t${r}`).join('\n')}\n`;
  const { outPath } = await normalizeFile(t, text, { ...fields, royaltyRate: { column: 'Rate' } });
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  const read = await duck.runAndReadAll(
    `SELECT royalty_rate::VARCHAR FROM read_parquet('${outPath}') ORDER BY source_row`,
  );
  duck.closeSync();
  t.same(
    read.getRows().map((r) => r[0]),
    [
      '0.850000000000',
      '0.850000000000',
      '0.125000000000',
      '-0.050000000000',
      '100.000000000000',
      '0.000000000000',
    ],
  );
});

t.test(
  'a 1904 workbook: serials formatted General (dates and periods) are read in its date system',
  async (t) => {
    /** A workbook whose Date and Period cells are bare serials (General), one Date cell formatted as a date. */
    const workbook = async (date1904: boolean) => {
      const wb = new ExcelJS.Workbook();
      wb.properties.date1904 = date1904;
      const ws = wb.addWorksheet('Statement');
      ws.addRow(['Period', 'Date', 'Title', 'Artist', 'Earnings (USD)']);
      // 1904 system: 43890 is 2024-03-01, 43904 2024-03-15, 43920 2024-03-31; a range of them is March 2024
      ws.addRow([43890, 43904, 'Paper Boats', 'Orla Finn', 1.25]);
      ws.addRow([43890.5, 43920, 'Glass Harbour', 'Orla Finn', 0.5]);
      ws.addRow(['43890 - 43920', new Date(Date.UTC(2024, 2, 20)), 'Low Tide', 'Orla Finn', 2]);
      ws.getCell('B4').numFmt = 'yyyy-mm-dd';
      return Buffer.from(await wb.xlsx.writeBuffer());
    };
    const mapping = {
      ...fields,
      stmtCadence: { column: 'Period' },
      salesPeriodStart: { column: 'Date' },
      salesPeriodEnd: { column: 'Period' },
    };
    const read = async (bytes: Buffer, name: string) => {
      const dir = await mkdtemp(path.join(tmpdir(), 'royalty-normalize-1904-'));
      t.teardown(() => rm(dir, { recursive: true, force: true }));
      const file = path.join(dir, name);
      await writeFile(file, bytes);
      const located = await locateTable({ sourcePath: file, fileName: name, workDir: dir });
      if (!located.ok) throw new Error(located.message);
      const out = await normalizeStatement(
        normalizeInput(located, mapping, dir, { fileName: name }),
      );
      if (!out.ok) throw new Error(out.message);
      const duck = await (await DuckDBInstance.create(':memory:')).connect();
      const rows = await duck.runAndReadAll(
        `SELECT raw_title, stmt_year, stmt_period, stmt_cadence, sales_period_start::VARCHAR, sales_period_end::VARCHAR FROM read_parquet('${path.join(dir, 'normalized.parquet')}') ORDER BY source_row`,
      );
      duck.closeSync();
      return { located, out, rows: rows.getRows() };
    };

    const mac = await read(await workbook(true), 'statement.xlsx');
    t.equal(mac.located.dateSystem, 1904, 'the file reader carries the date system');
    t.same(
      mac.located.sampleRows.map((r) => r.slice(0, 2)),
      [
        ['43890', '43904'],
        ['43890.5', '43920'],
        ['43890 - 43920', '2024-03-20'],
      ],
      'General cells stay serials, a date cell is an ISO date',
    );
    // a serial read as a sales period end is that day; the range of serials ends on its last day
    t.same(mac.rows, [
      ['Paper Boats', 2024, 3, 'M', '2024-03-15', '2024-03-01'],
      ['Glass Harbour', 2024, 3, 'M', '2024-03-31', '2024-03-01'],
      ['Low Tide', 2024, 3, 'M', '2024-03-20', '2024-03-31'],
    ]);
    t.equal(mac.out.keptRows, 3);

    // the same numbers in a 1900 workbook: 1462 days earlier
    const windows = await read(await workbook(false), 'statement.xlsx');
    t.equal(windows.located.dateSystem, 1900);
    t.same(windows.rows, [
      ['Paper Boats', 2020, 2, 'M', '2020-03-14', '2020-02-29'],
      ['Glass Harbour', 2020, 2, 'M', '2020-03-30', '2020-02-29'],
      ['Low Tide', 2020, 3, 'M', '2024-03-20', '2020-03-30'],
    ]);

    // a text file has no date system of its own: its serials are 1900's
    const text = await read(
      Buffer.from(
        'Period,Date,Title,Artist,Earnings (USD)\n43890,43904,Paper Boats,Orla Finn,1.25\n',
      ),
      'statement.csv',
    );
    t.equal(text.located.dateSystem, undefined);
    t.same(text.rows, [['Paper Boats', 2020, 2, 'M', '2020-03-14', '2020-02-29']]);
  },
);

t.test(
  'a small file (one thread, values listed whole) reads its rows as a large one of the same rows',
  async (t) => {
    const believe = (await loadMappingLibrary()).find((e) => e.key === 'believe')!;
    const text = await readFile(new URL('../../fixtures/statements/believe.csv', import.meta.url));
    const [header, ...rows] = text.toString('utf8').split('\n');
    const data = rows.filter((r) => r.trim() !== '');
    const copies = Math.ceil(SMALL_FILE_BYTES / Buffer.byteLength(data.join('\n'))) + 1;
    const large = [header, ...Array.from({ length: copies }, () => data).flat()].join('\n');
    t.ok(Buffer.byteLength(large) > SMALL_FILE_BYTES, 'the large file is not small');
    t.ok(text.length <= SMALL_FILE_BYTES, 'the small one is');
    const options = { fileName: 'believe.csv' };
    const small = await normalizeFile(t, text, believe.fields, options);
    const big = await normalizeFile(t, large, believe.fields, options);
    t.equal(big.out.keptRows, small.out.keptRows * copies);
    for (const key of ['stmt', 'salesPeriodStart', 'salesPeriodEnd', 'payors'] as const)
      t.same(big.out[key], small.out[key], key);
    const { issues } = small.out;
    t.same(big.out.issues, {
      ...issues,
      invalidAmounts: issues.invalidAmounts * copies,
      missingAmounts: issues.missingAmounts * copies,
      invalidIsrc: issues.invalidIsrc * copies,
      invalidUpc: issues.invalidUpc * copies,
      missingStmtPeriod: issues.missingStmtPeriod * copies,
    });
    t.same(
      small.out.rawValues.map((v) => [v.kind, v.raw, v.rows * copies]),
      big.out.rawValues.map((v) => [v.kind, v.raw, v.rows]),
    );
    // every looked-up value of the small file's rows as the large file's first copy reads it
    const columns =
      'source_row, stmt_year, stmt_period, currency, royalty_earnings::VARCHAR, units::VARCHAR, sales_period_start::VARCHAR, country, isrc, upc';
    const bigRows = await parquetRows(big.outPath, columns);
    t.same(await parquetRows(small.outPath, columns), bigRows.slice(0, data.length));
  },
);
