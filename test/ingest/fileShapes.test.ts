// The file reader on statement shapes of the field notes (statement-edge-cases.md): a total row
// repeating the rows' currency code, notes below the totals, a key row over its value row above
// the table, and an archive of more files than are read. Each file is read
// whole and, where the shape can sit in a large file's tail, from head and tail samples; each
// through the normalizer, so kept rows + removed rows = rows in the file and the sums are exact.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { zipFiles } from '../../fixtures/statements/kit.ts';
import { locate } from '../../src/ingest/file/locate.ts';
import type { LocatedTable } from '../../src/ingest/fileTypes.ts';
import { locateTable } from '../../workers/statementFile.ts';
import { HEADER, readJoined } from '../helpers/joinedTable.ts';

let root = '';
t.before(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'file-audit-'));
});
t.teardown(() => rm(root, { recursive: true, force: true }));

const ROWS = ['2024-03,Ember,EUR,3,1.50', '2024-03,Hollow,EUR,4,2.25', '2024-03,Stone,EUR,1,0.25']; // 8 units, 4.00
const text = (lines: string[]) => Buffer.from(lines.join('\n') + '\n');

/** The table located whole and from a head and a tail sample (the trailer in the tail). */
async function bothWays(name: string, bytes: Buffer): Promise<[string, LocatedTable][]> {
  const file = path.join(root, name);
  await writeFile(file, bytes);
  const out: [string, LocatedTable][] = [];
  for (const [how, limits] of [
    ['whole', undefined],
    ['sampled', { headBytes: 60, tailBytes: 100 }],
  ] as const) {
    out.push([
      `${name}, ${how}`,
      await locate(
        { sourcePath: file, fileName: name, workDir: await mkdtemp(path.join(root, 'w-')) },
        limits,
      ),
    ]);
  }
  return out;
}

const lineReasons = (r: LocatedTable) => r.removed.map((x) => [x.line, x.reason]);
const totals = (r: LocatedTable) =>
  r.footerTotals.map((f) => ({ label: f.label, kind: f.kind, values: { ...f.values } }));

t.test(
  'a total row that repeats the currency code of the rows is the footer, not a fourth data row',
  async (t) => {
    const cases: [string, string, string][] = [
      ['labelled.csv', 'Total,,EUR,8,4.00', 'Total'],
      ['unlabelled.csv', ',,EUR,8,4.00', ''],
    ];
    for (const [name, total, label] of cases) {
      const lines = [HEADER.join(','), ...ROWS, total];
      for (const [how, r] of await bothWays(name, text(lines))) {
        t.match(
          r,
          { headerLine: 0, dataRecords: 3, footerRecords: 1, removedTotal: 1 },
          `${how}: located`,
        );
        t.same(lineReasons(r), [[4, 'footer']], `${how}: the total line removed as footer`);
        t.same(
          totals(r),
          [{ label, kind: 'total', values: { Units: '8', Net: '4.00' } }],
          `${how}: the stated total`,
        );
      }
      const { located, out, flags, rows } = await readJoined(t, text(lines), name);
      t.equal(
        located.dataRecords + located.removedTotal + 1,
        lines.length,
        `${name}: kept + removed + header = lines of the file`,
      );
      t.equal(out.keptRows, 3, `${name}: rows kept`);
      t.equal(out.net, '4.000000000000', `${name}: net, the total not added to itself`);
      t.equal(out.units, '8.000000000000', `${name}: units`);
      t.same(
        rows.map((r) => r[1]),
        ['Ember', 'Hollow', 'Stone'],
      );
      t.same(
        flags.filter((f) => f.kind === 'footer_total_mismatch'),
        [],
        `${name}: the total matches the rows`,
      );
    }
  },
);

t.test(
  'notes below the totals (a generation stamp, a currency line) belong to the trailer; the file is not refused',
  async (t) => {
    const lines = [
      HEADER.join(','),
      ...ROWS,
      'Total,,,8,4.00',
      '',
      'Generated on 2024-04-01 by the label portal',
      'Currency,EUR',
    ];
    for (const [how, r] of await bothWays('notes.csv', text(lines))) {
      t.match(
        r,
        { headerLine: 0, dataRecords: 3, footerRecords: 3, removedTotal: 4 },
        `${how}: located`,
      );
      t.same(
        lineReasons(r),
        [
          [4, 'footer'],
          [5, 'blank'],
          [6, 'footer'],
          [7, 'footer'],
        ],
        `${how}: total, blank line and notes removed`,
      );
      t.same(
        totals(r),
        [{ label: 'Total', kind: 'total', values: { Units: '8', Net: '4.00' } }],
        `${how}: only the total row is a stated total`,
      );
    }
    const { located, out, flags } = await readJoined(t, text(lines), 'notes.csv');
    t.equal(
      located.dataRecords + located.removedTotal + 1,
      lines.length,
      'kept + removed + header = lines of the file',
    );
    t.equal(out.keptRows, 3);
    t.equal(out.net, '4.000000000000');
    t.same(
      flags.filter((f) => f.kind === 'footer_total_mismatch' || f.kind === 'missing_amounts'),
      [],
      'no note read as a row without an amount',
    );

    // a line of words above the totals, or between rows, stays a row of the table
    const inside = [
      HEADER.join(','),
      ROWS[0]!,
      '2024-03,Interlude',
      ROWS[1]!,
      ROWS[2]!,
      '2024-03,Hidden Track',
      'Total,,,8,4.00',
      'Generated on 2024-04-01',
    ];
    const r = await locate({
      sourcePath: await writeTo('inside.csv', text(inside)),
      fileName: 'inside.csv',
      workDir: await mkdtemp(path.join(root, 'w-')),
    });
    t.match(r, { dataRecords: 5, footerRecords: 2 }, 'rows of words inside the data are data');
    t.same(lineReasons(r), [
      [6, 'footer'],
      [7, 'footer'],
    ]);
  },
);

async function writeTo(name: string, bytes: Buffer): Promise<string> {
  const file = path.join(root, name);
  await writeFile(file, bytes);
  return file;
}

t.test(
  'a key row over its value row above the table is preamble, captured as statement values; the table header comes after',
  async (t) => {
    const lines = [
      'Account ID,Period,Currency',
      '12345,2024-03,EUR',
      '',
      HEADER.join(','),
      ...ROWS,
    ];
    const { located, out, rows } = await readJoined(t, text(lines), 'keyrow.csv');
    t.match(located, { headerLine: 3, dataRecords: 3, footerRecords: 0, removedTotal: 3 });
    t.same(located.header, HEADER);
    t.same(lineReasons(located), [
      [0, 'preamble'],
      [1, 'preamble'],
      [2, 'blank'],
    ]);
    t.same(
      { ...located.preambleValues },
      { 'Account ID': '12345', Period: '2024-03', Currency: 'EUR' },
    );
    t.equal(
      located.dataRecords + located.removedTotal + 1,
      lines.length,
      'kept + removed + header = lines of the file',
    );
    t.equal(out.keptRows, 3);
    t.equal(out.net, '4.000000000000');
    t.same(
      rows.map((r) => r[1]),
      ['Ember', 'Hollow', 'Stone'],
    );

    // key/value lines stacked in two columns stay pairs, and a one-row table alone keeps its header
    const stacked = await locate({
      sourcePath: await writeTo(
        'stacked.csv',
        text(['Payee,Orla Music', 'Account,100234', '', HEADER.join(','), ...ROWS]),
      ),
      fileName: 'stacked.csv',
      workDir: await mkdtemp(path.join(root, 'w-')),
    });
    t.match(stacked, { headerLine: 3, dataRecords: 3 });
    t.same({ ...stacked.preambleValues }, { Payee: 'Orla Music', Account: '100234' });
    const single = await locate({
      sourcePath: await writeTo('single.csv', text([HEADER.join(','), ROWS[0]!])),
      fileName: 'single.csv',
      workDir: await mkdtemp(path.join(root, 'w-')),
    });
    t.match(single, { headerLine: 0, dataRecords: 1 });
  },
);

t.test('an archive of more files than are read is refused, never read in part', async (t) => {
  const month = (i: number) =>
    text([HEADER.join(','), `2024-${String((i % 12) + 1).padStart(2, '0')},Track ${i},EUR,1,1.00`]);
  const archive = (n: number) =>
    zipFiles(
      Array.from({ length: n }, (_, i) => ({
        name: `stmt-${String(i + 1).padStart(2, '0')}.csv`,
        data: month(i),
      })),
    );
  const over = await locateTable({
    sourcePath: await writeTo('51.zip', archive(51)),
    fileName: '51.zip',
    workDir: await mkdtemp(path.join(root, 'w-')),
  });
  t.match(over, {
    ok: false,
    errorCode: 'FILE_TOO_LARGE_DECOMPRESSED',
    message:
      'The archive holds more than 50 files; at most 50 are read from one archive: upload it in parts.',
  });
  const at = await locateTable({
    sourcePath: await writeTo('50.zip', archive(50)),
    fileName: '50.zip',
    workDir: await mkdtemp(path.join(root, 'w-')),
  });
  t.match(at, { ok: true, dataRecords: 50 }, 'fifty files are read as one table');
  if (at.ok) t.equal(at.archiveEntry?.combined?.length, 50);
});

t.test(
  'exports joined end to end (cat a.csv b.csv): a byte-order mark at the start of a later line is no character of its cells',
  async (t) => {
    const part = (rows: string[]) => `\uFEFF${[HEADER.join(','), ...rows].join('\r\n')}\r\n`;
    // the second export's header line is a repeated header; a third piece starts with a data row
    const bytes = Buffer.from(
      part(ROWS.slice(0, 2)) + part(ROWS.slice(2)) + '\uFEFF2024-03,Tide,EUR,2,1.00\r\n',
    );
    const { located, out, rows } = await readJoined(t, bytes, 'joined.csv');
    t.equal(located.encoding, 'utf-8-bom');
    t.equal(located.dataRecords, 4);
    t.same(
      out.dropped,
      [{ reason: 'repeated_header', rows: 1 }],
      'the second header line is a repeated header, not a row without an amount',
    );
    t.same(rows, [
      [1, 'Ember', '1.500000000000'],
      [2, 'Hollow', '2.250000000000'],
      [3, 'Stone', '0.250000000000'],
      [4, 'Tide', '1.000000000000'],
    ]);
    t.equal(out.net, '5.000000000000');
    t.equal(out.stmt?.period, 3, "the last piece's period is read (it began with the mark)");
  },
);
