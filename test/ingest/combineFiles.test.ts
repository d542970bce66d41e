// An archive with a file per month (or store) holding one table: the files with the detail file's
// header and dialect are read as one, in archive order, whatever their encodings; summary files,
// files of another header or dialect never join and are named.
import { readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import iconv from 'iconv-lite';
import t from 'tap';
import { zipFiles } from '../../fixtures/statements/kit.ts';
import { HEADER, readJoined } from '../helpers/joinedTable.ts';

/** a month's file: a title line, the header, its rows and, unless `total` is false, a Total line (stated, or the true sums) */
function month(
  m: string,
  titles: string[],
  net: string[],
  options: { total?: boolean | [string, string]; delimiter?: string; newline?: string } = {},
): string {
  const d = options.delimiter ?? ',';
  const lines = [
    `Sales report 2024-${m}`,
    HEADER.join(d),
    ...titles.map((title, i) => [`2024-${m}`, title, 'USD', String(10 + i), net[i]!].join(d)),
  ];
  const total = options.total ?? true;
  if (total !== false) {
    const cents = net.reduce((a, b) => a + Math.round(Number(b) * 100), 0);
    const [units, sum] =
      total === true
        ? [String(titles.reduce((a, _, i) => a + 10 + i, 0)), (cents / 100).toFixed(2)]
        : total;
    lines.push(['Total', '', '', units, sum].join(d));
  }
  const nl = options.newline ?? '\n';
  return lines.join(nl) + nl;
}

const ingest = (
  t: { teardown(fn: () => unknown): void },
  archive: Buffer,
  fileName = 'statements.zip',
) => readJoined(t, archive, fileName);

const utf8 = (text: string) => Buffer.from(text, 'utf8');

t.test(
  "month files are one table in archive order, whatever each one's encoding; each row points at its line of the joined file",
  async (t) => {
    const { located, out, flags, rows } = await ingest(
      t,
      zipFiles([
        { name: 'summary.csv', data: utf8('Month,Net\n2024-01,3\n2024-02,9\n') },
        { name: 'report/2024-01.csv', data: utf8(month('01', ['A', 'B'], ['1.00', '2.00'])) },
        // an older export in Windows-1252
        {
          name: 'report/2024-02.csv',
          data: iconv.encode(
            month('02', ['Café', 'Noël', 'E', 'F'], ['1.50', '2.50', '3.00', '2.00']),
            'windows-1252',
          ),
        },
        { name: 'report/2024-03.csv', data: utf8(month('03', ['G'], ['0.25'])) },
      ]),
    );
    t.same(located.archiveEntry?.combined, [
      'report/2024-01.csv',
      'report/2024-02.csv',
      'report/2024-03.csv',
    ]);
    t.equal(
      located.archiveEntry?.name,
      'report/2024-01.csv',
      'the first file gives the header and preamble',
    );
    t.same(
      located.archiveEntry?.candidates.map((c) => [c.name, c.skipped ?? null]),
      [
        ['summary.csv', 'summary file'],
        ['report/2024-01.csv', null],
        ['report/2024-02.csv', null],
        ['report/2024-03.csv', null],
      ],
    );
    t.equal(located.container, 'zip');
    t.equal(located.encoding, 'utf-8+windows-1252');
    t.equal(out.keptRows, 7);
    t.equal(out.net, '12.250000000000');
    t.equal(out.units, '77.000000000000', 'units 10 + 11, 10 + 11 + 12 + 13 and 10');
    t.same(rows, [
      [1, 'A', '1.000000000000'],
      [2, 'B', '2.000000000000'],
      [3, 'Café', '1.500000000000'],
      [4, 'Noël', '2.500000000000'],
      [5, 'E', '3.000000000000'],
      [6, 'F', '2.000000000000'],
      [7, 'G', '0.250000000000'],
    ]);
    // source_row n is the n-th data record under the header of the joined file (the statement's single variant)
    const lines = (await readFile(located.csvPath, 'utf8')).trimEnd().split('\n');
    t.equal(lines[located.headerLine], HEADER.join(','));
    t.same(
      lines
        .slice(located.headerLine + 1)
        .filter((l) => !l.startsWith('Total'))
        .map((l) => l.split(',')[1]),
      ['A', 'B', 'Café', 'Noël', 'E', 'F', 'G'],
    );
    t.equal(located.footerRecords, 3, "each file's Total line is a footer row of the joined table");
    t.same(
      located.removed.map((r) => [r.line, r.reason, r.cells[0]]),
      [
        [0, 'preamble', 'Sales report 2024-01'],
        [lines.length - 3, 'footer', 'Total'],
        [lines.length - 2, 'footer', 'Total'],
        [lines.length - 1, 'footer', 'Total'],
        [-1, 'preamble', 'Sales report 2024-02'],
        [-1, 'repeated_header', 'Period'],
        [-1, 'preamble', 'Sales report 2024-03'],
        [-1, 'repeated_header', 'Period'],
      ],
    );
    // the three totals are added up and agree with the rows: no mismatch
    t.same(located.footerTotals, [
      {
        label: 'Total',
        values: { Units: '77.000000000000', Net: '12.250000000000' },
        kind: 'total',
      },
    ]);
    t.same(flags, [
      { kind: 'several_statement_periods', message: 'The rows span 3 statement periods.' },
      {
        kind: 'files_combined',
        message:
          'The files "report/2024-01.csv", "report/2024-02.csv", "report/2024-03.csv" of the archive have the same columns and were read as one table, in archive order.',
      },
    ]);
  },
);

t.test("a wrong total among the files' totals is caught against all the rows", async (t) => {
  const { out, flags } = await ingest(
    t,
    zipFiles([
      { name: 'jan.csv', data: utf8(month('01', ['A', 'B'], ['1.00', '2.00'])) },
      { name: 'feb.csv', data: utf8(month('02', ['C'], ['4.00'], { total: ['10', '4.50'] })) },
    ]),
  );
  t.equal(out.net, '7.000000000000');
  t.same(
    flags.filter((f) => f.kind === 'footer_total_mismatch').map((f) => f.message),
    ["The file's total (7.500000000000) differs from the sum of its rows (7.000000000000)."],
  );
});

t.test(
  'files of another header or delimiter stay tables of their own, and are named; other line breaks join',
  async (t) => {
    const { located, out, flags, rows } = await ingest(
      t,
      zipFiles([
        { name: 'jan.csv', data: utf8(month('01', ['A', 'B', 'C'], ['1.00', '2.00', '3.00'])) },
        { name: 'stores.csv', data: utf8('Store,Streams\nS1,1\nS2,2\nS3,3\n') },
        {
          name: 'feb-semicolon.csv',
          data: utf8(month('02', ['X'], ['100.00'], { delimiter: ';' })),
        },
        {
          name: 'mar-windows.csv',
          data: utf8(month('03', ['Y'], ['200.00'], { newline: '\r\n' })),
        },
        { name: 'apr.csv', data: utf8(month('04', ['D'], ['4.00'])) },
      ]),
    );
    t.same(located.archiveEntry?.combined, ['jan.csv', 'mar-windows.csv', 'apr.csv']);
    t.equal(out.keptRows, 5);
    t.equal(out.net, '210.000000000000');
    t.same(
      rows.map((r) => r[1]),
      ['A', 'B', 'C', 'Y', 'D'],
    );
    t.notOk(
      flags.some((f) => f.kind === 'footer_total_mismatch'),
      "the three files' totals add up to their rows",
    );
    t.same(
      flags.find((f) => f.kind === 'other_tables_not_read'),
      {
        kind: 'other_tables_not_read',
        message:
          'Only the files "jan.csv", "mar-windows.csv", "apr.csv" were read; "stores.csv", "feb-semicolon.csv" also hold tables: upload each as its own statement.',
      },
    );
    t.notOk(
      (await readFile(located.csvPath, 'latin1')).includes('\r'),
      'a mix of line breaks is joined with LF throughout',
    );
  },
);

t.test(
  'files that are all in Windows line breaks join as such; a tar in gzip joins like a zip',
  async (t) => {
    const crlf = await ingest(
      t,
      zipFiles([
        { name: 'jan.csv', data: utf8(month('01', ['A'], ['1.00'], { newline: '\r\n' })) },
        {
          name: 'feb.csv',
          data: utf8(month('02', ['B', 'C'], ['2.00', '3.00'], { newline: '\r\n' })),
        },
      ]),
    );
    t.same(crlf.located.archiveEntry?.combined, ['jan.csv', 'feb.csv']);
    t.same(crlf.rows, [
      [1, 'A', '1.000000000000'],
      [2, 'B', '2.000000000000'],
      [3, 'C', '3.000000000000'],
    ]);
    t.notOk(
      (await readFile(crlf.located.csvPath, 'utf8')).replace(/\r\n/g, '').includes('\n'),
      'one kind of line break throughout',
    );

    const tar = await ingest(
      t,
      gzipSync(
        tarOf([
          ['jan.csv', month('01', ['A'], ['1.00'])],
          ['feb.csv', month('02', ['B'], ['2.00'])],
        ]),
      ),
      'statements.tar.gz',
    );
    t.equal(tar.located.container, 'gzip');
    t.same(tar.located.archiveEntry?.combined, ['jan.csv', 'feb.csv']);
    t.equal(tar.out.net, '3.000000000000');
  },
);

t.test('a summary-named file never joins, even with the same header', async (t) => {
  const { located, flags } = await ingest(
    t,
    zipFiles([
      { name: 'totals.csv', data: utf8(month('01', ['X'], ['9.00'])) },
      { name: 'detail.csv', data: utf8(month('01', ['A', 'B'], ['1.00', '2.00'])) },
    ]),
  );
  t.equal(located.archiveEntry?.name, 'detail.csv');
  t.equal(located.archiveEntry?.combined, undefined);
  t.same(
    flags.map((f) => f.kind),
    [],
  );
});

/** A ustar archive of text files. */
function tarOf(files: [string, string][]): Buffer {
  const blocks: Buffer[] = [];
  for (const [name, text] of files) {
    const data = Buffer.from(text, 'utf8');
    const header = Buffer.alloc(512);
    header.write(name, 0, 'utf8');
    header.write('0000644\0', 100);
    header.write('0000000\0', 108);
    header.write('0000000\0', 116);
    header.write(`${data.length.toString(8).padStart(11, '0')}\0`, 124);
    header.write('00000000000\0', 136);
    header.write('        ', 148);
    header.write('0', 156);
    header.write('ustar\0', 257);
    header.write('00', 263);
    let sum = 0;
    for (const b of header) sum += b;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(header, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}
