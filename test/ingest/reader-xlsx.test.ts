// XLSX specifics of the statement file reader (checklist J), on workbooks written part by part as
// Excel and other writers store them: every kind of cell value (shared and inline strings, rich
// text runs, Japanese text with its phonetic reading, formulas' cached text, booleans and errors,
// ISO dates, numbers stored as text, escaped characters), cells and rows without references,
// namespace-prefixed elements, worksheet parts by any name, UTF-8 characters split between inflated
// chunks, hidden rows, columns and sheets, a `dimension` that lies, formatting down to row
// 1,048,576, and references beyond Excel's grid. Each through the file reader and, where the value
// matters to a figure, through the normalizer.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import t from 'tap';
import { zipFiles } from '../../fixtures/statements/kit.ts';
import type { LocatedTable } from '../../src/ingest/fileTypes.ts';
import { locateTable } from '../../workers/statementFile.ts';
import { normalizeFile } from '../helpers/normalize.ts';
import { fields, HEADER } from '../helpers/sampleMapping.ts';

let root = '';
t.before(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reader-xlsx-'));
});
t.teardown(() => rm(root, { recursive: true, force: true }));

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const NS =
  'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';

interface SheetPart {
  name: string;
  xml: string;
  state?: string;
  /** the worksheet part's path under xl/ (default worksheets/sheetN.xml) */
  target?: string;
}

/** A workbook from its XML parts, stored in the given order (worksheets first, as Excel often does). */
function workbook(
  sheets: SheetPart[],
  extra: { sharedStrings?: string; styles?: string } = {},
): Buffer {
  const targets = sheets.map((s, i) => s.target ?? `worksheets/sheet${i + 1}.xml`);
  const files: { name: string; data: Buffer }[] = [];
  const add = (name: string, xml: string) => files.push({ name, data: Buffer.from(xml) });
  add(
    '[Content_Types].xml',
    `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/></Types>`,
  );
  add(
    '_rels/.rels',
    `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
  );
  sheets.forEach((s, i) =>
    add(targets[i]!.startsWith('/') ? targets[i]!.slice(1) : `xl/${targets[i]}`, s.xml),
  );
  add(
    'xl/workbook.xml',
    `<?xml version="1.0" encoding="UTF-8"?><workbook ${NS}><sheets>${sheets.map((s, i) => `<sheet name="${esc(s.name)}" sheetId="${i + 1}"${s.state ? ` state="${s.state}"` : ''} r:id="rId${i + 1}"/>`).join('')}</sheets></workbook>`,
  );
  const rels = sheets.map(
    (_, i) =>
      `<Relationship Id="rId${i + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="${targets[i]}"/>`,
  );
  if (extra.sharedStrings)
    rels.push(
      `<Relationship Id="rIdS" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>`,
    );
  if (extra.styles)
    rels.push(
      `<Relationship Id="rIdT" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>`,
    );
  add(
    'xl/_rels/workbook.xml.rels',
    `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${rels.join('')}</Relationships>`,
  );
  if (extra.sharedStrings)
    add(
      'xl/sharedStrings.xml',
      `<?xml version="1.0" encoding="UTF-8"?><sst ${NS}>${extra.sharedStrings}</sst>`,
    );
  if (extra.styles) add('xl/styles.xml', extra.styles);
  return zipFiles(files);
}

const colName = (i: number) => {
  let s = '';
  for (let n = i + 1; n > 0; n = Math.floor((n - 1) / 26))
    s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
};
const inline = (ref: string, text: string) =>
  `<c r="${ref}" t="inlineStr"><is><t xml:space="preserve">${esc(text)}</t></is></c>`;
const num = (ref: string, n: number | string) => `<c r="${ref}"><v>${n}</v></c>`;
/** A row of inline strings and numbers. */
const row = (r: number, cells: (string | number)[], attrs = '') =>
  `<row r="${r}"${attrs}>${cells.map((v, i) => (typeof v === 'number' ? num(`${colName(i)}${r}`, v) : inline(`${colName(i)}${r}`, v))).join('')}</row>`;
const sheet = (rows: string, before = '', after = '') =>
  `<?xml version="1.0" encoding="UTF-8"?><worksheet ${NS}>${before}<sheetData>${rows}</sheetData>${after}</worksheet>`;
const headerRow = row(1, HEADER);

async function read(
  t: { teardown(fn: () => unknown): void },
  bytes: Buffer,
  name = 'statement.xlsx',
): Promise<{ located: LocatedTable; csv: string[] }> {
  const dir = await mkdtemp(path.join(root, 'w-'));
  const file = path.join(dir, 'original');
  await writeFile(file, bytes);
  const located = await locateTable({ sourcePath: file, fileName: name, workDir: dir });
  if (!located.ok) throw new Error(`${located.errorCode}: ${located.message}`);
  return {
    located,
    csv: (await readFile(located.csvPath, 'utf8')).split('\n').filter((l) => l !== ''),
  };
}

async function refused(bytes: Buffer): Promise<{ errorCode: string; message: string }> {
  const dir = await mkdtemp(path.join(root, 'w-'));
  const file = path.join(dir, 'original');
  await writeFile(file, bytes);
  const located = await locateTable({ sourcePath: file, fileName: 'statement.xlsx', workDir: dir });
  if (located.ok) throw new Error('read, not refused');
  return { errorCode: located.errorCode, message: located.message };
}

t.test('cell values as the statement means them, whatever the cell type', async (t) => {
  const sst = [
    '<si><t>Song</t>\n  </si>',
    // rich text runs in a shared string
    '<si><r><t xml:space="preserve">Rich </t></r><r><rPr><b/></rPr><t>Title</t></r></si>',
    // Japanese typed with an IME: Excel stores the reading (rPh) with the text
    '<si><t>夜に駆ける</t><rPh sb="0" eb="1"><t>ヨル</t></rPh><rPh sb="2" eb="3"><t>カ</t></rPh><phoneticPr fontId="1"/></si>',
    '<si><t>&amp;lt;3 &amp;amp; Rock</t></si>',
  ].join('');
  const rows = [
    headerRow,
    `<row r="2">${inline('A2', '2024-03')}<c r="B2" t="s"><v>0</v></c>${inline('C2', 'EUR')}<c r="D2" t="str"><v>7</v></c><c r="E2" t="str"><v>1.25</v></c></row>`,
    `<row r="3">${inline('A3', '2024-03')}<c r="B3" t="s"><v>1</v></c>${inline('C3', 'EUR')}${num('D3', 1)}<c r="E3"><f>SUM(1,1)</f><v>2</v></c></row>`,
    `<row r="4">${inline('A4', '2024-03')}<c r="B4" t="s"><v>2</v></c>${inline('C4', 'JPY')}${num('D4', 1)}${num('E4', 100)}</row>`,
    `<row r="5">${inline('A5', '2024-03')}<c r="B5" t="s"><v>3</v></c>${inline('C5', 'EUR')}${num('D5', 1)}${num('E5', 0.5)}</row>`,
    // an inline string of two runs; a formula's cached TRUE and #N/A
    `<row r="6">${inline('A6', '2024-03')}<c r="B6" t="inlineStr"><is><r><t>Ru</t></r><r><rPr><i/></rPr><t>ns</t></r></is></c>${inline('C6', 'EUR')}<c r="D6" t="b"><f>TRUE()</f><v>1</v></c><c r="E6" t="e"><f>NA()</f><v>#N/A</v></c></row>`,
    // an ISO date cell (t="d"), a formula's cached text, a boolean
    `<row r="7"><c r="A7" t="d"><v>2024-03-01T00:00:00</v></c><c r="B7" t="str"><f>"Form"&amp;"ula"</f><v>Formula</v></c>${inline('C7', 'EUR')}<c r="D7" t="b"><v>0</v></c>${num('E7', 3)}</row>`,
  ].join('');
  const bytes = workbook([{ name: 'Sales', xml: sheet(rows) }], { sharedStrings: sst });
  const { located, csv } = await read(t, bytes);
  t.same(located.header, HEADER);
  t.equal(located.dataRecords, 6);
  t.same(csv.slice(1), [
    '2024-03,Song,EUR,7,1.25',
    '2024-03,Rich Title,EUR,1,2',
    '2024-03,夜に駆ける,JPY,1,100',
    '2024-03,&lt;3 &amp; Rock,EUR,1,0.5',
    '2024-03,Runs,EUR,TRUE,#N/A',
    '2024-03-01,Formula,EUR,FALSE,3',
  ]);
  // through the normalizer: the cached #N/A is an unreadable amount, never an empty one
  const { out } = await normalizeFile(t, bytes, fields, { fileName: 'statement.xlsx' });
  t.equal(out.keptRows, 6);
  t.equal(out.issues.invalidAmounts, 1);
  t.equal(out.issues.missingAmounts, 0);
  t.same(out.perCurrency, [
    { currency: 'EUR', rows: 5, net: '6.750000000000', gross: null, units: '9.000000000000' },
    { currency: 'JPY', rows: 1, net: '100.000000000000', gross: null, units: '1.000000000000' },
  ]);
});

t.test(
  'cells and rows without references, elements with a namespace prefix, a worksheet part of any name',
  async (t) => {
    const unreferenced = sheet(
      `<row>${HEADER.map((h) => `<c t="inlineStr"><is><t>${h}</t></is></c>`).join('')}</row>` +
        `<row><c t="inlineStr"><is><t>2024-03</t></is></c><c t="inlineStr"><is><t>A</t></is></c><c t="inlineStr"><is><t>EUR</t></is></c><c><v>1</v></c><c><v>2.5</v></c></row>` +
        // a cell with a reference sets the column the next ones follow
        `<row><c t="inlineStr"><is><t>2024-03</t></is></c><c r="C3" t="inlineStr"><is><t>EUR</t></is></c><c><v>2</v></c><c><v>1.5</v></c></row>`,
    );
    const a = await read(t, workbook([{ name: 'S', xml: unreferenced }]));
    t.same(a.csv, ['Period,Title,Currency,Units,Net', '2024-03,A,EUR,1,2.5', '2024-03,,EUR,2,1.5']);

    // the Open XML SDK writes every element with a prefix
    const prefixed = `<?xml version="1.0" encoding="UTF-8"?><x:worksheet xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><x:sheetData>${[
      headerRow,
      row(2, ['2024-03', 'A', 'EUR', 1, 2.5]),
    ]
      .join('')
      .replace(/<(\/?)(row|c|is|t|v)\b/g, '<$1x:$2')}</x:sheetData></x:worksheet>`;
    const b = await read(
      t,
      workbook([{ name: 'S', xml: prefixed }], { sharedStrings: '<x:si><x:t>unused</x:t></x:si>' }),
    );
    t.same(b.csv, ['Period,Title,Currency,Units,Net', '2024-03,A,EUR,1,2.5']);

    // the workbook's relationships name the part; sheets are read in workbook order
    const c = await read(
      t,
      workbook([
        {
          name: 'Detail',
          xml: sheet(
            [
              headerRow,
              row(2, ['2024-03', 'A', 'EUR', 1, 2.5]),
              row(3, ['2024-03', 'B', 'EUR', 1, 1]),
            ].join(''),
          ),
          target: 'worksheets/detail.xml',
        },
        {
          name: 'Lookup',
          xml: sheet(row(1, ['Code', 'Name']) + row(2, ['A', 'Alpha'])),
          target: '/xl/worksheets/lookup.xml',
        },
      ]),
    );
    t.equal(c.located.sheet?.name, 'Detail');
    t.same(
      c.located.sheet?.candidates.map((s) => s.name),
      ['Detail', 'Lookup'],
    );
    t.equal(c.located.dataRecords, 2);
  },
);

t.test('a UTF-8 character split between two inflated chunks stays whole', async (t) => {
  // 40,000 shared strings of three-byte characters: the part inflates in chunks of 16 KiB, and some
  // chunk ends inside a character (each `<si>` is 31 bytes, no multiple of any chunk size)
  const n = 40_000;
  const titles = Array.from({ length: n }, (_, i) => `夜に駆ける ${String(i).padStart(5, '0')}`);
  const sst = titles.map((s) => `<si><t>${s}</t></si>`).join('');
  const rows = [headerRow];
  for (let i = 0; i < n; i++)
    rows.push(
      `<row r="${i + 2}">${inline(`A${i + 2}`, '2024-03')}<c r="B${i + 2}" t="s"><v>${i}</v></c>${inline(`C${i + 2}`, 'JPY')}${num(`D${i + 2}`, 1)}${num(`E${i + 2}`, 10)}</row>`,
    );
  const { located, csv } = await read(
    t,
    workbook([{ name: 'S', xml: sheet(rows.join('')) }], { sharedStrings: sst }),
  );
  t.equal(located.dataRecords, n);
  t.equal(csv.filter((l) => l.includes('\uFFFD')).length, 0, 'no replacement character');
  t.same(
    csv.slice(1).map((l) => l.split(',')[1]),
    titles,
    'every title as written',
  );
});

t.test(
  'hidden rows, columns and sheets are read; a lying dimension and formatting down to row 1,048,576 change nothing',
  async (t) => {
    const data = [
      headerRow,
      row(2, ['2024-03', 'A', 'EUR', 1, 1.25], ' hidden="1"'),
      row(3, ['2024-03', 'B', 'EUR', 2, 2.5]),
    ].join('');
    // a hidden column, a dimension that says one cell, a hidden lookup sheet before the detail
    const hidden = workbook([
      {
        name: 'Lookup',
        state: 'hidden',
        xml: sheet(row(1, ['Code', 'Store']) + row(2, ['SP', 'Spotify'])),
      },
      {
        name: 'Detail',
        xml: sheet(
          data,
          '<dimension ref="A1"/><cols><col min="2" max="2" width="0" hidden="1"/></cols>',
        ),
      },
    ]);
    const a = await read(t, hidden);
    t.equal(a.located.sheet?.name, 'Detail');
    t.same(
      a.csv,
      ['Period,Title,Currency,Units,Net', '2024-03,A,EUR,1,1.25', '2024-03,B,EUR,2,2.5'],
      'the hidden row and column read',
    );
    t.equal(a.located.sheet?.candidates.find((c) => c.name === 'Lookup')?.skipped, 'hidden sheet');

    // styled empty rows and cells down to Excel's last row: read, no blank rows kept (how fast is
    // bench:ingest's business, not a test's: a machine under load took over a minute here)
    const formatting: string[] = [];
    for (let r = 4; r <= 1_048_576; r++)
      formatting.push(
        `<row r="${r}" s="1" customFormat="1"><c r="A${r}" s="1"/><c r="E${r}" s="1"/></row>`,
      );
    const b = await read(
      t,
      workbook([
        {
          name: 'Detail',
          xml: sheet(data + formatting.join(''), '<dimension ref="A1:E1048576"/>'),
        },
      ]),
    );
    t.equal(b.located.dataRecords, 2);
    t.same(b.csv, a.csv);
    t.equal(
      (await readFile(b.located.csvPath)).length,
      a.csv.join('\n').length + 1,
      'nothing written past the last row with content',
    );
  },
);

t.test(
  'references beyond Excel grid and malformed XML are a damaged workbook, not a hang or a crash',
  async (t) => {
    for (const [name, rows, want] of [
      [
        'column past XFD',
        headerRow + `<row r="2"><c r="XFE2"><v>1</v></c></row>`,
        /beyond Excel's last column/,
      ],
      [
        'row past 1,048,576',
        headerRow + `<row r="1048577">${inline('A1048577', 'x')}</row>`,
        /a row numbered/,
      ],
      [
        'a reference that is none',
        headerRow + `<row r="2"><c r="2A"><v>1</v></c></row>`,
        /a cell reference "2A"/,
      ],
      [
        'unclosed element',
        headerRow + `<row r="2"><c r="A2"><v>1</v></row>`,
        /not well-formed XML/,
      ],
    ] as const) {
      const { errorCode, message } = await refused(workbook([{ name: 'S', xml: sheet(rows) }]));
      t.equal(errorCode, 'FILE_DAMAGED', name);
      t.match(message, want, name);
    }
  },
);

t.test('a number cell keeps the digits the file wrote: an 18-digit ID is no double', async (t) => {
  const header = row(1, ['Period', 'Asset ID', 'Currency', 'Units', 'Net']);
  const rows = [
    `<row r="2">${inline('A2', '2024-03')}${num('B2', '123456789012345678')}${inline('C2', 'USD')}${num('D2', '007')}${num('E2', '1.50')}</row>`,
    `<row r="3">${inline('A3', '2024-03')}${num('B3', '9007199254740993')}${inline('C3', 'USD')}${num('D3', '-0')}${num('E3', '0.30000000000000004')}</row>`,
    `<row r="4">${inline('A4', '2024-03')}${num('B4', '1.91774E+11')}${inline('C4', 'USD')}${num('D4', '+2')}${num('E4', '-12.340')}</row>`,
  ];
  const { csv } = await read(t, workbook([{ name: 'S', xml: sheet(header + rows.join('')) }]));
  t.same(csv.slice(1), [
    '2024-03,123456789012345678,USD,7,1.5',
    '2024-03,9007199254740993,USD,0,0.30000000000000004',
    '2024-03,191774000000,USD,2,-12.34',
  ]);
});

t.test(
  'a number is a date when the number format of its style is one: custom, built-in or neither',
  async (t) => {
    // styles of cellXfs by position: General, built-in 14 (mm-dd-yy), custom 164, built-in 3
    // (#,##0), 27 (read by the locale: no format the file states), 4 redefined by the workbook as a
    // date; the xf of cellStyleXfs is no cell style
    const SML = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
    const styles =
      `<?xml version="1.0" encoding="UTF-8"?><x:styleSheet xmlns:x="${SML}">` +
      '<x:numFmts count="2"><x:numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd"/><x:numFmt numFmtId="4" formatCode="d/m/yyyy"/></x:numFmts>' +
      '<x:cellStyleXfs count="1"><x:xf numFmtId="14"/></x:cellStyleXfs>' +
      '<x:cellXfs count="6"><x:xf numFmtId="0"/><x:xf numFmtId="14" applyNumberFormat="1"/><x:xf numFmtId="164"/><x:xf numFmtId="3"/><x:xf numFmtId="27"/><x:xf numFmtId="4"/></x:cellXfs>' +
      '</x:styleSheet>';
    const header = row(1, ['Sold', 'Title', 'Currency', 'Units', 'Net']);
    const styled = [0, 1, 2, 3, 4, 5, 99].map(
      (style, i) =>
        `<row r="${i + 2}"><c r="A${i + 2}" s="${style}"><v>45366</v></c>${inline(`B${i + 2}`, `s${style}`)}${inline(`C${i + 2}`, 'USD')}${num(`D${i + 2}`, 1)}${num(`E${i + 2}`, 1)}</row>`,
    );
    const { csv } = await read(
      t,
      workbook([{ name: 'S', xml: sheet(header + styled.join('')) }], { styles }),
    );
    t.same(csv.slice(1), [
      '45366,s0,USD,1,1',
      '2024-03-15,s1,USD,1,1',
      '2024-03-15,s2,USD,1,1',
      '45366,s3,USD,1,1',
      '45366,s4,USD,1,1',
      '2024-03-15,s5,USD,1,1',
      '45366,s99,USD,1,1',
    ]);

    const { errorCode, message } = await refused(
      workbook([{ name: 'S', xml: sheet(header + styled[1]) }], {
        styles: `<styleSheet xmlns="${SML}"><cellXfs>`,
      }),
    );
    t.equal(errorCode, 'FILE_DAMAGED');
    t.match(message, /its part "xl\/styles.xml" is not well-formed XML/);
  },
);

t.test(
  'a header cell merged across columns names each of them; a merged title row above the header is preamble',
  async (t) => {
    const wb = new ExcelJS.Workbook();
    const s = wb.addWorksheet('Sales');
    s.addRow(['Royalty statement, March 2024']);
    s.mergeCells('A1:F1');
    // `Net` over E:F, the amount under E and its currency under F
    s.addRow(['Period', 'Title', 'Units', 'Net', '', '']);
    s.mergeCells('D2:E2');
    s.addRow([]);
    for (let i = 0; i < 4; i++) s.addRow(['2024-03', `Song ${i}`, i + 1, (i + 1) * 1.25, 'EUR']);
    s.spliceRows(3, 1);
    const bytes = Buffer.from(await wb.xlsx.writeBuffer());
    const { located } = await read(t, bytes);
    t.equal(located.headerLine, 1);
    t.same(located.header, ['Period', 'Title', 'Units', 'Net', 'Net (2)']);
    t.equal(located.dataRecords, 4);
    const { out } = await normalizeFile(
      t,
      bytes,
      { ...fields, currency: { column: 'Net (2)' }, royaltyEarnings: { column: 'Net' } },
      { fileName: 'statement.xlsx' },
    );
    t.equal(out.keptRows, 4);
    t.equal(out.issues.extraCells, 0, 'the currency column is named by the header, no extra cell');
    t.same(out.perCurrency, [
      { currency: 'EUR', rows: 4, net: '12.500000000000', gross: null, units: '10.000000000000' },
    ]);
  },
);

t.test(
  'OOXML escapes (_xHHHH_) read as the characters Excel shows, in shared and inline strings and cached formula text',
  async (t) => {
    const sst = [
      // 0: a carriage return and line feed, as Excel writes a cell typed with Alt+Enter on Windows
      '<si><t>Line_x000D__x000A_Two</t></si>',
      // 1: a tab
      '<si><t>Tab_x0009_Sep</t></si>',
      // 2: `_x005F_` is an underscore: the text `_x000D_` as typed
      '<si><t>_x005F_x000D_ typed</t></si>',
      // 3: each run decoded on its own; lower-case hex digits; underscores that are no escape kept
      '<si><r><t>Ri_x0063_h</t></r><r><rPr><b/></rPr><t xml:space="preserve">_x0020_run_x00_my_file_x005f_</t></r></si>',
      // 4: NUL removed (PostgreSQL stores none), U+FEFF removed (Excel shows nothing)
      '<si><t>_x0000_Song_xFEFF_</t></si>',
      // 5: a character outside the BMP as its surrogate pair
      '<si><t>Hit _xD83C__xDFB5_</t></si>',
    ].join('');
    const str = (ref: string, v: string) => `<c r="${ref}" t="s"><v>${v}</v></c>`;
    const rows = [
      headerRow,
      `<row r="2">${inline('A2', '2024-03')}${str('B2', '0')}${inline('C2', 'EUR')}${num('D2', 1)}${num('E2', 1)}</row>`,
      `<row r="3">${inline('A3', '2024-03')}${str('B3', '1')}${inline('C3', 'EUR')}${num('D3', 1)}${num('E3', 2)}</row>`,
      `<row r="4">${inline('A4', '2024-03')}${str('B4', '2')}${inline('C4', 'EUR')}${num('D4', 1)}${num('E4', 3)}</row>`,
      `<row r="5">${inline('A5', '2024-03')}${str('B5', '3')}${inline('C5', 'EUR')}${num('D5', 1)}${num('E5', 4)}</row>`,
      `<row r="6">${inline('A6', '2024-03')}${str('B6', '4')}${inline('C6', 'EUR')}${num('D6', 1)}${num('E6', 5)}</row>`,
      `<row r="7">${inline('A7', '2024-03')}${str('B7', '5')}${inline('C7', 'EUR')}${num('D7', 1)}${num('E7', 6)}</row>`,
      // inline strings: a currency and an amount with escapes in them; a formula's cached text
      `<row r="8">${inline('A8', '2024-03')}<c r="B8" t="str"><f>"A"&amp;CHAR(9)&amp;"B"</f><v>A_x0009_B_x005F_x0009_</v></c><c r="C8" t="inlineStr"><is><t>E_x0055_R</t></is></c>${num('D8', 1)}<c r="E8" t="inlineStr"><is><t>_xFEFF_1_x0032_.50</t></is></c></row>`,
      // the same carriage return written as an XML character reference reads the same
      `<row r="9">${inline('A9', '2024-03')}<c r="B9" t="inlineStr"><is><t>Line&#13;&#10;Two</t></is></c>${inline('C9', 'EUR')}${num('D9', 1)}${num('E9', 7)}</row>`,
    ].join('');
    const bytes = workbook([{ name: 'Sales', xml: sheet(rows) }], { sharedStrings: sst });
    const { located } = await read(t, bytes);
    t.equal(located.dataRecords, 8);
    t.same(
      located.sampleRows.map((r) => r[1]),
      [
        'Line\r\nTwo',
        'Tab\tSep',
        '_x000D_ typed',
        'Rich run_x00_my_file_',
        'Song',
        'Hit \u{1F3B5}',
        'A\tB_x0009_',
        'Line\r\nTwo',
      ],
    );
    t.same(located.sampleRows[6], ['2024-03', 'A\tB_x0009_', 'EUR', '1', '12.50']);
    const { out } = await normalizeFile(t, bytes, fields, { fileName: 'statement.xlsx' });
    t.equal(out.keptRows, 8);
    t.equal(out.issues.invalidAmounts, 0);
    t.same(out.issues.unknownCurrencies, []);
    t.same(out.perCurrency, [
      { currency: 'EUR', rows: 8, net: '40.500000000000', gross: null, units: '8.000000000000' },
    ]);
  },
);
