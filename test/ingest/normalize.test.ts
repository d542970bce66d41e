// The normalizer's two CSV readings: DuckDB's strict reader first, the lenient one for files it
// refuses. Both must give the same cells, literal quote characters included (a title of 12").
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import t from 'tap';
import { locateTable } from '../../workers/statementFile.ts';
import { normalizeStatement } from '../../workers/normalize.ts';

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

async function normalizeText(t: { teardown(fn: () => unknown): void }, text: string): Promise<{ rows: string[][]; net: string | null }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'royalty-normalize-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'statement.tsv');
  await writeFile(file, text);
  const located = await locateTable({ sourcePath: file, fileName: 'statement.tsv', workDir: dir });
  if (!located.ok) throw new Error(located.message);
  const outPath = path.join(dir, 'normalized.parquet');
  const out = await normalizeStatement({
    csvPath: located.csvPath,
    delimiter: located.delimiter,
    quote: located.quote,
    headerLine: located.headerLine,
    header: located.header,
    footerRecords: located.footerRecords,
    fields,
    decimalComma: located.decimalComma,
    dateOrder: located.dateOrder,
    fileName: 'statement.tsv',
    variables: {},
    statementId: '00000000-0000-4000-8000-000000000001',
    organizationId: '00000000-0000-4000-8000-000000000002',
    rightsholderId: '00000000-0000-4000-8000-000000000003',
    outPath,
    removedPath: path.join(dir, 'removed.csv'),
  });
  if (!out.ok) throw new Error(out.message);
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  const read = await duck.runAndReadAll(`SELECT source_row::VARCHAR, raw_title, raw_artist, royalty_earnings::VARCHAR FROM read_parquet('${outPath}') ORDER BY source_row`);
  duck.closeSync();
  return { rows: read.getRows() as string[][], net: out.net };
}

const lines = ['2024-03\tSummer 12" Mix\tOrla Finn\t1.25', '2024-03\t"Live" at Home\tOrla Finn\t0.50', '2024-03\tPlain\tOrla Finn\t2.00'];
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

t.test('a ragged tab file the strict reader refuses: the lenient reading keeps the same cells', async (t) => {
  // the second row carries a stray extra cell, which strict CSV reading refuses
  const ragged = [lines[0], `${lines[1]}\textra`, lines[2]];
  const r = await normalizeText(t, `${HEADER.join('\t')}\n${ragged.join('\n')}\n`);
  t.same(r.rows, expected);
  t.equal(r.net, '3.750000000000');
});
