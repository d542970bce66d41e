// Hostile track titles and artists from a fixture statement (fixtures/exports/) travel through
// ingestion into CSV and XLSX exports neutralised against formula injection, while the numeric
// columns stay numbers; Parquet keeps the values exactly as they are.
import path from 'node:path';
import t from 'tap';
import XLSX from '@e965/xlsx';
import { DuckDBInstance, LIST, VARCHAR, listValue } from '@duckdb/node-api';
import { neutralizedSql } from '../../../src/exports/run.ts';
import { xmlText } from '../../../src/exports/xlsx.ts';
import { m } from '../../analytics/helpers.ts';
import { canonicalDecimal } from '../../helpers/decimal.ts';
import { createRightsholder, uploadFixture, waitForStatement } from '../../helpers/ingest.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { downloadAll, readTable, records, runExport, sumDecimals } from './helpers.ts';

const fixture = path.join(
  import.meta.dirname,
  '../../../fixtures/exports/tunecore-hostile-titles.csv',
);
const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'Formula Injection Org');
const org = owner.organizationId;
const rightsholderId = await createRightsholder(owner.client, org, 'Hostile Titles');
const { statementId } = await uploadFixture(owner.client, org, rightsholderId, fixture);
const statement = await waitForStatement(owner.client, org, statementId);

const HOSTILE_TITLES = [
  '=HYPERLINK("http://evil.example/x","Click me")',
  "+cmd|' /C calc'!A0",
  "-2+3+cmd|' /C calc'!A0",
  "@SUM(1+1)*cmd|' /C calc'!A0",
  '\tTabbed =1+1',
];
const SAFE_TITLES = ['Plain Title, with comma', 'She said "hi"', 'Safe = Title'];

async function exportRows(format: 'csv' | 'xlsx' | 'parquet') {
  const done = await runExport(owner.client, org, {
    type: 'royalty_lines',
    format,
    rightsholderIds: [rightsholderId],
  });
  t.equal(done.status, 'completed', `${format} export ${done.errorCode ?? ''}`);
  const files = await downloadAll(owner.client, org, done.id);
  const tables = await Promise.all(files.map((f) => readTable(format, f.bytes)));
  return { files, tables, rows: records(tables) };
}

t.test('the fixture statement is ingested with its hostile titles intact', async (t) => {
  t.equal(statement.status, 'processed', JSON.stringify(statement.failureReason ?? null));
  const { rows } = await exportRows('parquet');
  t.same(
    rows.map((r) => r.track_title_raw).sort(),
    [...HOSTILE_TITLES, ...SAFE_TITLES].sort(),
    'Parquet keeps every value as it is',
  );
});

t.test(
  'CSV: text cells that start like a formula get a leading apostrophe; numbers stay numbers',
  async (t) => {
    const { rows, files } = await exportRows('csv');
    const titles = rows.map((r) => r.track_title_raw);
    for (const title of HOSTILE_TITLES)
      t.ok(titles.includes(`'${title}`), `neutralised: ${JSON.stringify(title)}`);
    for (const title of SAFE_TITLES)
      t.ok(titles.includes(title), `unchanged: ${JSON.stringify(title)}`);
    t.ok(
      rows.every(
        (r) =>
          !/^[=+\-@\t\r]/.test(r.track_title_raw!) && !/^[=+\-@\t\r]/.test(r.track_artist_raw!),
      ),
      'no text cell starts a formula',
    );
    t.ok(
      rows.some((r) => r.track_artist_raw === "'=1+1") &&
        rows.some((r) => r.track_artist_raw === "'@Artist"),
      'artists too',
    );
    const negative = rows.find((r) => r.track_title_raw === "'-2+3+cmd|' /C calc'!A0")!;
    t.equal(
      negative.royalty_earnings,
      '-1.250000000000',
      'a negative amount is written as a number, not neutralised',
    );
    t.equal(negative.units, '0.000000000000');
    // the raw text: the hostile title is quoted where CSV needs it, and never starts a line with a formula
    const text = files[0]!.bytes.toString('utf8');
    t.notOk(/(^|,)=HYPERLINK/m.test(text));
    t.ok(text.includes(`"'=HYPERLINK(""http://evil.example/x"",""Click me"")"`));
  },
);

t.test(
  'XLSX: neutralised inline strings, numeric cells for numbers, no formulas; opens in a spreadsheet reader',
  async (t) => {
    const { rows, tables, files } = await exportRows('xlsx');
    const table = tables[0]!;
    const titles = rows.map((r) => r.track_title_raw);
    for (const title of HOSTILE_TITLES)
      t.ok(titles.includes(`'${title}`), `neutralised: ${JSON.stringify(title)}`);
    for (const title of SAFE_TITLES)
      t.ok(titles.includes(title), `unchanged: ${JSON.stringify(title)}`);
    const amount = table.columns.indexOf('royalty_earnings');
    const title = table.columns.indexOf('track_title_raw');
    t.ok(
      table.kinds!.every((k) => k[amount] === 'n' && k[title] === 's'),
      'amounts are numeric cells, titles string cells',
    );
    const book = XLSX.read(files[0]!.bytes, { type: 'buffer', cellFormula: true });
    const sheet = book.Sheets[book.SheetNames[0]!]!;
    const cells = Object.entries(sheet).filter(([k]) => !k.startsWith('!')) as [
      string,
      XLSX.CellObject,
    ][];
    t.notOk(
      cells.some(([, c]) => c.f !== undefined),
      'no cell holds a formula',
    );
    const json = XLSX.utils.sheet_to_json<Record<string, unknown>>(sheet);
    t.equal(json.length, 8);
    const negative = json.find((r) => r.track_title_raw === "'-2+3+cmd|' /C calc'!A0")!;
    t.equal(negative.royalty_earnings, -1.25, 'read back as a number');
  },
);

t.test('the export sums equal the statement and cube.query', async (t) => {
  const { rows } = await exportRows('csv');
  const cube = await owner.client.mutate('cube.query', {
    organizationId: org,
    query: {
      measures: [m('royalty_earnings'), m('royalty_earnings_usd')],
      filters: [{ member: m('rightsholder_id'), operator: 'equals', values: [rightsholderId] }],
    },
  });
  t.equal(sumDecimals(rows.map((r) => r.royalty_earnings)), '22.850000000006');
  t.equal(canonicalDecimal(statement.netEarnings), '22.850000000006', "the statement's own total");
  t.equal(
    sumDecimals(rows.map((r) => r.royalty_earnings)),
    cube.data.data[0][m('royalty_earnings')],
  );
  t.equal(
    sumDecimals(rows.map((r) => r.royalty_earnings_usd)),
    cube.data.data[0][m('royalty_earnings_usd')],
  );
});

t.test(
  'the neutralisation rule itself: every formula lead, carriage return included',
  async (t) => {
    const instance = await DuckDBInstance.create(':memory:');
    const c = await instance.connect();
    // control characters before a formula lead count too: the XLSX writer drops them (XML cannot hold them)
    const values = [
      '=1',
      '+1',
      '-1',
      '@a',
      '\tx',
      '\rx',
      'a=1',
      ' =1',
      '',
      "'=1",
      '\u0001=1',
      '\u000b+x',
      '\u0002\u001f@a',
      '\u0001a',
      '\uffff=1',
      '\ufffe\u0001-1',
      '\uffffa',
    ];
    const rows = (
      await c.runAndReadAll(
        `SELECT ${neutralizedSql('v')} FROM (SELECT unnest($1::VARCHAR[]) AS v)`,
        [listValue(values)],
        [LIST(VARCHAR)],
      )
    ).getRows();
    c.closeSync();
    instance.closeSync();
    t.same(
      rows.map((r) => r[0]),
      [
        "'=1",
        "'+1",
        "'-1",
        "'@a",
        "'\tx",
        "'\rx",
        'a=1',
        ' =1',
        '',
        "'=1",
        "'\u0001=1",
        "'\u000b+x",
        "'\u0002\u001f@a",
        '\u0001a',
        "'\uffff=1",
        "'\ufffe\u0001-1",
        '\uffffa',
      ],
    );
    // and in the XLSX text the apostrophe stays first once they are dropped
    t.equal(xmlText('\'\u0001=HYPERLINK("x")'), "'=HYPERLINK(&quot;x&quot;)");
    t.equal(
      xmlText("'\uffff=1\r\n"),
      "'=1&#13;\n",
      'U+FFFF dropped too; a carriage return kept as a reference',
    );
  },
);
