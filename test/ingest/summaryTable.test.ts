// A detail table followed by a shorter summary table set from the first column (`Country,Units,Net`
// under `Period,Title,Currency,Units,Net`): the detail is the table, the summary its trailer, read
// whole and from head and tail samples, and through the normalizer (kept + removed = lines).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { locate } from '../../src/ingest/file/locate.ts';
import { HEADER, readJoined } from '../helpers/joinedTable.ts';

let root = '';
t.before(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'summary-table-'));
});
t.teardown(() => rm(root, { recursive: true, force: true }));

const detail = (n: number) =>
  Array.from({ length: n }, (_, i) => `2024-03,Track ${i + 1},EUR,${i + 1},${i + 1}.25`);

t.test(
  'a summary table after the detail, narrower and set from the first column, is the trailer',
  async (t) => {
    const cases: [string, string[], number][] = [
      // a summary as long as the detail, after a blank line: its header scored above the detail's
      [
        'after a blank line',
        [HEADER.join(','), ...detail(2), '', 'Country,Units,Net', 'US,2,2.25', 'GB,1,1.25'],
        2,
      ],
      [
        'right under the detail',
        [HEADER.join(','), ...detail(10), 'Country,Units,Net', 'US,40,40.50', 'GB,15,15.00'],
        10,
      ],
      [
        'titles of its own',
        [
          HEADER.join(','),
          ...detail(4),
          '',
          'Store,Quantity,Net,Currency',
          'Spotify,6,6.50,EUR',
          'Apple Music,4,4.50,EUR',
        ],
        4,
      ],
    ];
    for (const [name, lines, rows] of cases) {
      const bytes = Buffer.from(lines.join('\n') + '\n');
      const file = path.join(root, `${name}.csv`);
      await writeFile(file, bytes);
      const summaryAt = lines.findIndex((l, i) => i > 0 && /^(Country|Store),/.test(l));
      for (const limits of [undefined, { headBytes: 80, tailBytes: 100 }]) {
        const how = `${name}, ${limits ? 'sampled' : 'whole'}`;
        const r = await locate(
          {
            sourcePath: file,
            fileName: `${name}.csv`,
            workDir: await mkdtemp(path.join(root, 'w-')),
          },
          limits,
        );
        t.equal(r.headerLine, 0, `${how}: the detail's header`);
        t.same(r.header, HEADER, how);
        t.equal(r.dataRecords, rows, `${how}: the detail's rows`);
        t.same(
          r.removed.filter((x) => x.reason === 'summary').map((x) => x.line),
          [summaryAt, summaryAt + 1, summaryAt + 2],
          `${how}: the summary removed`,
        );
      }
      const { located, out, rows: written } = await readJoined(t, bytes, `${name}.csv`);
      t.equal(
        located.dataRecords + located.removedTotal + 1,
        lines.length,
        `${name}: kept + removed + header = lines`,
      );
      t.equal(out.keptRows, rows, `${name}: rows kept`);
      const cents = detail(rows).reduce(
        (sum, l) => sum + Math.round(Number(l.split(',')[4]) * 100),
        0,
      );
      t.equal(
        out.net,
        `${(cents / 100).toFixed(2)}0000000000`,
        `${name}: the detail's sum, the summary not added`,
      );
      t.same(
        written.map((w) => w[1]),
        detail(rows).map((l) => l.split(',')[1]),
        `${name}: the detail's rows written`,
      );
      t.equal(out.issues.missingStmtPeriod, 0);
    }
  },
);

t.test('a data row of words is no summary header', async (t) => {
  // titles that are header words, in their own columns, and one moved name only: data rows
  const lines = [
    HEADER.join(','),
    '2024-03,Track,EUR,1,1.00',
    '2024-03,Units,EUR,,',
    '2024-03,Net Title,EUR,2,2.00',
    'Store,Units,EUR,,',
  ];
  const { located, out } = await readJoined(t, Buffer.from(lines.join('\n') + '\n'), 'words.csv');
  t.equal(located.dataRecords, 4);
  t.same(located.removed, []);
  t.equal(out.keptRows, 4);
  t.equal(out.net, '3.000000000000');
});

t.test('a summary table exactly as wide as the detail is the trailer too', async (t) => {
  // `Store,Country,Currency,Units,Net` under `Period,Title,Currency,Units,Net`: as wide, its words
  // where the detail has its figures, and other names than the detail's in two columns
  const cases: [string, string[], number][] = [
    [
      'after a blank line',
      [
        HEADER.join(','),
        ...detail(3),
        '',
        'Store,Country,Currency,Units,Net',
        'Spotify,US,EUR,4,4.50',
        'Apple Music,GB,EUR,2,2.25',
      ],
      3,
    ],
    [
      'right under the detail, longer than it',
      [
        HEADER.join(','),
        ...detail(2),
        'Country,Store,Currency,Quantity,Amount',
        'US,Spotify,EUR,1,1.25',
        'GB,Spotify,EUR,1,1.00',
        'DE,Deezer,EUR,1,1.25',
      ],
      2,
    ],
    [
      'under a total',
      [
        HEADER.join(','),
        ...detail(4),
        'Total,,,10,11.00',
        '',
        'Store,Territory,Currency,Units,Net',
        'Spotify,US,EUR,10,11.00',
      ],
      4,
    ],
  ];
  for (const [name, lines, rows] of cases) {
    const bytes = Buffer.from(lines.join('\n') + '\n');
    const file = path.join(root, `wide ${name}.csv`);
    await writeFile(file, bytes);
    const summaryAt = lines.findIndex((l, i) => i > 0 && /^(Country|Store),/.test(l));
    for (const limits of [undefined, { headBytes: 80, tailBytes: 160 }]) {
      const how = `${name}, ${limits ? 'sampled' : 'whole'}`;
      const r = await locate(
        {
          sourcePath: file,
          fileName: `${name}.csv`,
          workDir: await mkdtemp(path.join(root, 'w-')),
        },
        limits,
      );
      t.equal(r.headerLine, 0, `${how}: the detail's header`);
      t.equal(r.dataRecords, rows, `${how}: the detail's rows`);
      t.same(
        r.removed.filter((x) => x.reason === 'summary').map((x) => x.line),
        lines.map((_, i) => i).filter((i) => i >= summaryAt),
        `${how}: the summary removed`,
      );
    }
    const { located, out, flags, rows: written } = await readJoined(t, bytes, `${name}.csv`);
    t.equal(
      located.dataRecords + located.removedTotal + 1,
      lines.length,
      `${name}: kept + removed + header = lines`,
    );
    t.equal(out.keptRows, rows, `${name}: rows kept`);
    const cents = detail(rows).reduce(
      (sum, l) => sum + Math.round(Number(l.split(',')[4]) * 100),
      0,
    );
    t.equal(
      out.net,
      `${(cents / 100).toFixed(2)}0000000000`,
      `${name}: the detail's sum, the summary not added`,
    );
    t.same(
      written.map((w) => w[1]),
      detail(rows).map((l) => l.split(',')[1]),
      `${name}: the detail's rows written`,
    );
    t.same(
      flags
        .map((f) => f.kind)
        .filter((k) => k === 'invalid_amounts' || k === 'missing_statement_period'),
      [],
      `${name}: no invalid amount, no missing period`,
    );
  }
});

t.test(
  'the header again, or a data row of words as wide as the table, is no summary header',
  async (t) => {
    const lines = [
      HEADER.join(','),
      '2024-03,Track,EUR,1,1.00',
      // the header written again in capitals: one name changed at most is still this table
      'Period,Track Title,Currency,Units,Net',
      '2024-03,Units,EUR,2,2.00',
      // words in every column, but a number's column holds no column name
      '2024-03,Store,EUR,n/a,n/a',
    ];
    const { located, out } = await readJoined(
      t,
      Buffer.from(lines.join('\n') + '\n'),
      'same-width-words.csv',
    );
    t.equal(located.removed.filter((r) => r.reason === 'summary').length, 0);
    t.equal(out.keptRows, 4);
  },
);
