// NUL characters, which PostgreSQL cannot store (text and jsonb refuse them), never leave the file
// reader: a text file's are removed as it is cleaned, and so are a legacy .xls workbook's cells',
// while a sheet's or an archive member's name keeps its place as U+FFFD. Before, they
// reached the statement's layout, suggested mapping and raw values, whose writes failed on every
// retry (INGEST_FAILED).
import * as XLSX from '@e965/xlsx';
import t from 'tap';
import { zipFiles } from '../../fixtures/statements/kit.ts';
import { normalizeFile } from '../helpers/normalize.ts';

const fields = {
  stmtYear: { column: 'Period' },
  stmtPeriod: { column: 'Period' },
  stmtCadence: { constant: 'M' },
  currency: { constant: 'USD' },
  royaltyEarnings: { column: 'Net' },
  rawTitle: { column: 'Title' },
  salesType: { column: 'Type' },
};

t.test(
  "a legacy .xls workbook: NUL removed from its cells, U+FFFD in its sheet's name",
  async (t) => {
    const wb = XLSX.utils.book_new();
    XLSX.utils.book_append_sheet(
      wb,
      XLSX.utils.aoa_to_sheet([
        ['Period', 'Ti\u0000tle', 'Type', 'Net'],
        ['2024-03', 'So\u0000ng', 'Str\u0000eam', 1.5],
      ]),
      'Sa\u0000les',
    );
    const { located, out } = await normalizeFile(
      t,
      XLSX.write(wb, { type: 'buffer', bookType: 'xls' }),
      fields,
      { fileName: 'nul.xls' },
    );
    t.equal(
      located.sheet?.name,
      'Sa\uFFFDles',
      'a name keeps its place (removed, it could name another sheet)',
    );
    t.same(located.header, ['Period', 'Title', 'Type', 'Net']);
    t.same(located.sampleRows, [['2024-03', 'Song', 'Stream', '1.5']]);
    t.same(
      out.rawValues.map((v) => v.raw),
      ['Stream'],
    );
    t.equal(out.net, '1.500000000000');
    t.notMatch(JSON.stringify(located), /\\u0000/);
  },
);

t.test("an archive member's name: NUL becomes U+FFFD, as an invalid UTF-8 byte does", async (t) => {
  const body = Buffer.from('Period,Title,Type,Net\n2024-03,Song,Stream,1.00\n');
  const { located, out } = await normalizeFile(
    t,
    zipFiles([
      { name: 'jan\u0000.csv', data: body },
      { name: 'feb.csv', data: body },
    ]),
    fields,
    { fileName: 'months.zip' },
  );
  t.equal(located.archiveEntry?.name, 'jan\uFFFD.csv');
  t.same(located.archiveEntry?.combined, ['jan\uFFFD.csv', 'feb.csv']);
  t.same(
    located.archiveEntry?.candidates.map((c) => c.name),
    ['jan\uFFFD.csv', 'feb.csv'],
  );
  t.equal(out.net, '2.000000000000');
  t.notMatch(JSON.stringify(located), /\\u0000/);
});
