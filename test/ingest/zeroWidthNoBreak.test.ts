// U+FEFF inside a cell (a zero-width no-break space, or a byte-order mark left mid-line by a
// careless join) is no character of the cell, as Excel shows nothing for it: it is removed from a
// text file's cells, whatever the encoding, and from a legacy .xls workbook's, so an amount, a
// currency code or a title reads through it. Before, `E\uFEFFUR` was an unknown currency and
// `\uFEFFSong` another title than `Song`. (An .xlsx workbook's cells: test/ingest/reader-xlsx.test.ts.)
import * as XLSX from '@e965/xlsx';
import iconv from 'iconv-lite';
import t from 'tap';
import { normalizeFile } from '../helpers/normalize.ts';
import { fields, HEADER } from '../helpers/sampleMapping.ts';

const ROWS = [
  ['2024-03', '\uFEFFSong', 'EUR', '1', '\uFEFF12.50'],
  ['2024-03', 'Song\uFEFF', 'E\uFEFFUR', '\uFEFF2', '1\uFEFF2.50'],
  ['\uFEFF2024-03', 'So\uFEFFng', 'EUR\uFEFF', '3', '-0.25\uFEFF'],
];
const EXPECTED = [
  ['2024-03', 'Song', 'EUR', '1', '12.50'],
  ['2024-03', 'Song', 'EUR', '2', '12.50'],
  ['2024-03', 'Song', 'EUR', '3', '-0.25'],
];
const PER_CURRENCY = [
  { currency: 'EUR', rows: 3, net: '24.750000000000', gross: null, units: '6.000000000000' },
];

t.test(
  'a text file: U+FEFF removed from every cell, in UTF-8 (read in place before) and UTF-16',
  async (t) => {
    const text = `${[HEADER, ...ROWS].map((r) => r.join(',')).join('\n')}\n`;
    for (const [name, bytes] of [
      ['utf-8', Buffer.from(text)],
      ['utf-16le', Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(text, 'utf-16le')])],
    ] as const) {
      const { located, out } = await normalizeFile(t, bytes, fields, { fileName: 'statement.csv' });
      t.equal(located.encoding, name);
      t.same(located.header, HEADER, name);
      t.same(located.sampleRows, EXPECTED, name);
      t.same(out.issues.unknownCurrencies, [], name);
      t.equal(out.issues.invalidAmounts, 0, name);
      t.same(out.perCurrency, PER_CURRENCY, name);
    }
  },
);

t.test('a legacy .xls workbook: U+FEFF removed from its cells', async (t) => {
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([HEADER, ...ROWS]), 'Sales');
  const { located, out } = await normalizeFile(
    t,
    XLSX.write(wb, { type: 'buffer', bookType: 'xls' }),
    fields,
    { fileName: 'statement.xls' },
  );
  t.same(located.sampleRows, EXPECTED);
  t.same(out.issues.unknownCurrencies, []);
  t.equal(out.issues.invalidAmounts, 0);
  t.same(out.perCurrency, PER_CURRENCY);
});
