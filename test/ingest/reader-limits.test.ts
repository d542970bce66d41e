// Scale and hostile sizes (checklist K): a 100 MB file without a line break, a huge field deep in
// the file or in a Windows-1252 file, each refused quickly with the line it starts on; an archive
// of thousands of tiny files refused before they are all extracted; and cells built to make
// regular expressions or loops backtrack, read through the file reader and the normalizer in
// bounded time.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { zipFiles } from '../../fixtures/statements/kit.ts';
import { normalizeUpc } from '../../src/ingest/values.ts';
import { locateTable } from '../../workers/statementFile.ts';
import { normalizeFile } from '../helpers/normalize.ts';

let root = '';
t.before(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reader-limits-'));
});
t.teardown(() => rm(root, { recursive: true, force: true }));

async function refusal(
  bytes: Buffer,
  fileName: string,
): Promise<{ errorCode: string; message: string; ms: number }> {
  const dir = await mkdtemp(path.join(root, 'w-'));
  const file = path.join(dir, 'original');
  await writeFile(file, bytes);
  const started = Date.now();
  const r = await locateTable({ sourcePath: file, fileName, workDir: dir });
  const ms = Date.now() - started;
  await rm(dir, { recursive: true, force: true });
  if (r.ok) throw new Error(`${fileName}: read, not refused`);
  return { errorCode: r.errorCode, message: r.message, ms };
}

const HEAD = 'Period,Title,Currency,Units,Net\n2024-03,A,EUR,1,1.25\n2024-03,B,EUR,1,1.25\n';

t.test(
  'a 100 MB line, a huge field: FIELD_TOO_LARGE with the line it starts on, in seconds',
  async (t) => {
    const cases: [string, Buffer, RegExp][] = [
      [
        '100 MB without a line break',
        Buffer.alloc(100 * 1024 * 1024, 'a'),
        /^The first line of the file is longer than/,
      ],
      [
        '100 MB of cells without a line break',
        Buffer.from('ab,'.repeat(35 * 1024 * 1024)),
        /^The first line of the file is longer than/,
      ],
      [
        'a 5 MB field on line 4',
        Buffer.from(`${HEAD}2024-03,${'x'.repeat(5 * 1024 * 1024)},EUR,1,1.25\n`),
        /^The record starting at line 4 is longer than 1 MiB/,
      ],
      [
        'a quoted field that never closes on line 4',
        Buffer.from(`${HEAD}2024-03,"${'x\n'.repeat(3 * 1024 * 1024)}`),
        /^The record starting at line 4 is longer than 1 MiB/,
      ],
      [
        'a 5 MB field on line 4 of a Windows-1252 file',
        Buffer.concat([
          Buffer.from(
            'Period,Title,Currency,Units,Net\n2024-03,Caf\xe9,EUR,1,1.25\r\n2024-03,B,EUR,1,1.25\r\n',
            'latin1',
          ),
          Buffer.from(`2024-03,${'x'.repeat(5 * 1024 * 1024)},EUR,1,1.25\n`),
        ]),
        /^Line 4 of the file is longer than 1 MiB/,
      ],
    ];
    const deep = Array.from({ length: 100_000 }, (_, i) => `2024-03,T${i},EUR,1,1.25`).join('\n');
    cases.push([
      'a 3 MB field on line 100,004',
      Buffer.from(`${HEAD}${deep}\n2024-03,${'x'.repeat(3 * 1024 * 1024)},EUR,1,1.25\n${deep}\n`),
      /^The record starting at line 100004 is longer than 1 MiB/,
    ]);
    for (const [name, bytes, message] of cases) {
      const r = await refusal(bytes, 'statement.csv');
      t.equal(r.errorCode, 'FIELD_TOO_LARGE', name);
      t.match(r.message, message, name);
      t.ok(r.ms < 20_000, `${name}: refused in ${r.ms} ms`);
    }
  },
);

t.test(
  'an archive of thousands of tiny files is refused before they are all extracted',
  async (t) => {
    const files = Array.from({ length: 3000 }, (_, i) => ({
      name: `statements/${i}.csv`,
      data: Buffer.from(`${HEAD}`),
    }));
    const r = await refusal(zipFiles(files), 'batch.zip');
    t.equal(r.errorCode, 'FILE_TOO_LARGE_DECOMPRESSED');
    t.equal(r.message, 'The archive holds 3000 entries, more than the 1000 accepted.');
    t.ok(r.ms < 10_000, `refused in ${r.ms} ms`);
    const r2 = await refusal(zipFiles(files.slice(0, 900)), 'batch.zip');
    t.equal(r2.errorCode, 'FILE_TOO_LARGE_DECOMPRESSED');
    t.equal(
      r2.message,
      'The archive holds more than 50 files; at most 50 are read from one archive: upload it in parts.',
    );
  },
);

t.test('cells built to make the readers backtrack are read in bounded time', async (t) => {
  // values of 75-90 KB (a record stays under the 1 MiB limit), in every column a per-value reader
  // reads; twenty distinct UPC cells of `empty:` repeated (a prefix loop once took a second each)
  const n = 15_000;
  const hostile = [
    'empty:'.repeat(n),
    '1,'.repeat(n * 3),
    '2024-'.repeat(n),
    ' '.repeat(n * 6) + 'x',
    'Q1 '.repeat(n * 2),
    '01/'.repeat(n * 2),
    '('.repeat(n * 6),
    'Rest of the '.repeat(n / 2),
  ];
  const upcs = Array.from({ length: 20 }, (_, i) => `${'empty:'.repeat(n)}${i}`);
  const started = Date.now();
  for (const v of [...hostile, ...upcs]) t.equal(normalizeUpc(v), null);
  t.ok(Date.now() - started < 2000, `UPC reader: ${Date.now() - started} ms`);

  const header = 'Period,Title,Currency,Units,Net,UPC,ISRC,Country,Sales Start';
  const q = (v: string) => `"${v.replace(/"/g, '""')}"`;
  const rows = upcs.map((upc, i) => {
    const v = q(hostile[i % hostile.length]!);
    return [v, v, v, v, v, q(upc), v, v, v].join(',');
  });
  const csv = `${header}\n2024-03,Ok,EUR,1,1.25,036000291452,USRC17607839,US,2024-03-01\n${rows.join('\n')}\n`;
  const mapping = {
    stmtYear: { column: 'Period' },
    stmtPeriod: { column: 'Period' },
    stmtCadence: { column: 'Period' },
    currency: { column: 'Currency' },
    units: { column: 'Units' },
    royaltyEarnings: { column: 'Net' },
    rawTitle: { column: 'Title' },
    upc: { column: 'UPC' },
    isrc: { column: 'ISRC' },
    country: { column: 'Country' },
    salesPeriodStart: { column: 'Sales Start' },
  };
  // the yardstick, measured here so that the machine's load weighs on both alike: the same file
  // with every hostile cell replaced by plain letters of its length. The hostile cells take about
  // 3 times as long (dates, amounts and codes are tried on them); a reader that backtracks or loops
  // on them (a second a cell, as the UPC prefix loop once did) takes well over 6 times as long.
  const plainRows = upcs.map((upc, i) => {
    const v = q('x'.repeat(hostile[i % hostile.length]!.length));
    return [v, v, v, v, v, q('x'.repeat(upc.length)), v, v, v].join(',');
  });
  const plain = `${header}\n${csv.split('\n')[1]}\n${plainRows.join('\n')}\n`;
  t.equal(plain.length, csv.length, 'the yardstick is as large');
  let begun = performance.now();
  await normalizeFile(t, plain, mapping, { fileName: 'plain-cells.csv' });
  const plainMs = performance.now() - begun;
  begun = performance.now();
  const { located, out } = await normalizeFile(t, csv, mapping, { fileName: 'hostile-cells.csv' });
  const ms = performance.now() - begun;
  t.ok(
    ms < 6 * plainMs,
    `read and normalized in ${Math.round(ms)} ms, ${(ms / plainMs).toFixed(1)} times the ${Math.round(plainMs)} ms of plain cells`,
  );
  t.equal(located.dataRecords, 1 + upcs.length);
  t.equal(out.keptRows, 1 + upcs.length);
  t.same(
    out.perCurrency.find((c) => c.currency === 'EUR'),
    { currency: 'EUR', rows: 1, net: '1.250000000000', gross: null, units: '1.000000000000' },
  );
  t.equal(out.issues.invalidUpc, upcs.length);
  t.equal(out.issues.invalidIsrc, upcs.length);
  t.equal(out.issues.missingStmtPeriod, upcs.length);
});

t.test(
  'a table of more than 10,000 columns is refused at once (the normalizer ran out of memory from about 16,000, and spent minutes on 100,000)',
  async (t) => {
    const wide = (columns: number) => {
      const names = Array.from({ length: columns - 2 }, (_, i) => `C${i}`);
      const cells = names.map((_, i) => String(i % 10));
      return Buffer.from(
        `Period,Net,${names.join(',')}\n2024-03,1.00,${cells.join(',')}\n2024-03,2.00,${cells.join(',')}\n`,
      );
    };
    for (const columns of [10_001, 16_384, 100_000]) {
      const r = await refusal(wide(columns), 'wide.csv');
      t.same(
        [r.errorCode, r.message],
        [
          'FILE_TOO_MANY_COLUMNS',
          `The table has ${columns.toLocaleString('en-US')} columns; at most 10,000 are read: this is no statement table, or export it with the columns it needs.`,
        ],
      );
      t.ok(r.ms < 10_000, `${columns} columns refused in ${r.ms} ms`);
    }
    // 10,000 are read, to the cent
    const fields = {
      stmtYear: { column: 'Period' },
      stmtPeriod: { column: 'Period' },
      stmtCadence: { constant: 'M' },
      currency: { constant: 'USD' },
      royaltyEarnings: { column: 'Net' },
      rawTitle: { column: 'C5' },
    };
    const { located, out } = await normalizeFile(t, wide(10_000), fields, { fileName: 'wide.csv' });
    t.equal(located.header.length, 10_000);
    t.same([out.keptRows, out.net], [2, '3.000000000000']);
  },
);
