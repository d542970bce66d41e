// The statement file reader (workers/statementFile.ts): every statement fixture located exactly
// as its expected.json says (and its money column summing to the cent), every hostile upload
// refused with its errorCode, the large-file path, and the worker thread path.
import { createWriteStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import iconv from 'iconv-lite';
import t from 'tap';
import { locate } from '../../src/ingest/file/locate.ts';
import type { LocatedTable } from '../../src/ingest/fileTypes.ts';
import { createThreadPool } from '../../src/workers/threadPool.ts';
import { computeHeaderHash } from '../../workers/headerHash.ts';
import { locateTable } from '../../workers/statementFile.ts';
import yauzl from 'yauzl';
import { type Expected, zipFiles } from '../../fixtures/statements/kit.ts';
import { repoRoot } from '../setup/paths.ts';

const STATEMENTS = path.join(repoRoot, 'fixtures', 'statements');
const HOSTILE = path.join(repoRoot, 'fixtures', 'hostile');

let root = '';
t.before(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'statement-file-'));
});
t.teardown(() => rm(root, { recursive: true, force: true }));
const workDir = () => mkdtemp(path.join(root, 'w-'));

async function run(file: string, limits?: Record<string, number>): Promise<LocatedTable> {
  const result = await locateTable({
    sourcePath: file,
    fileName: path.basename(file),
    workDir: await workDir(),
    ...(limits ? { limits } : {}),
  });
  if (!result.ok) throw new Error(`${path.basename(file)}: ${result.errorCode} ${result.message}`);
  return result;
}

/** Exact decimal sum (BigInt), written with the largest number of decimals among the values. */
function exactSum(values: readonly string[], decimalComma: boolean): string {
  const parsed = values
    .filter((raw) => raw.trim() !== '')
    .map((raw) => {
      const v = decimalComma ? raw.trim().replace(',', '.') : raw.trim();
      if (!/^-?\d+(\.\d+)?$/.test(v)) throw new Error(`not a plain decimal: ${raw}`);
      const neg = v.startsWith('-');
      const [int, frac = ''] = (neg ? v.slice(1) : v).split('.');
      return { neg, int: int!, frac };
    });
  const scale = Math.max(0, ...parsed.map((p) => p.frac.length));
  let total = 0n;
  for (const p of parsed) {
    const n = BigInt(p.int) * 10n ** BigInt(scale) + BigInt(p.frac.padEnd(scale, '0') || '0');
    total += p.neg ? -n : n;
  }
  const neg = total < 0n;
  const abs = neg ? -total : total;
  const unit = 10n ** BigInt(scale);
  return (
    (neg ? '-' : '') +
    (scale > 0 ? `${abs / unit}.${(abs % unit).toString().padStart(scale, '0')}` : `${abs}`)
  );
}

/** The data records as a consumer reads them: skip headerLine + 1 physical lines, drop blank and repeated header lines, then the footer. */
async function dataRows(located: LocatedTable): Promise<string[][]> {
  const text = await readFile(located.csvPath, 'utf8');
  let at = 0;
  for (let i = 0; i <= located.headerLine; i++) at = text.indexOf('\n', at) + 1;
  const records = parse(text.slice(at), {
    delimiter: located.delimiter,
    quote: located.quote === '' ? false : '"',
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: false,
  }) as string[][];
  const kept = records.filter(
    (r) =>
      r.some((c) => c.trim() !== '') && !located.header.every((h, i) => (r[i] ?? '').trim() === h),
  );
  return kept.slice(0, kept.length - located.footerRecords);
}

const expectations = async (): Promise<Expected[]> => {
  const files = (await readdir(STATEMENTS)).filter((f) => f.endsWith('.expected.json')).sort();
  return Promise.all(
    files.map(
      async (f) => JSON.parse(await readFile(path.join(STATEMENTS, f), 'utf8')) as Expected,
    ),
  );
};

t.test('every statement fixture is located exactly as its expected.json says', async (t) => {
  const all = await expectations();
  t.ok(all.length >= 15, `${all.length} fixtures`);
  t.ok(new Set(all.map((e) => e.source)).size >= 12, 'from many sources');
  for (const e of all) {
    await t.test(e.file, async (t) => {
      const source = path.join(STATEMENTS, e.file);
      const r = await run(source);
      t.match(
        r,
        {
          format: e.format,
          container: e.container,
          encoding: e.encoding,
          delimiter: e.delimiter,
          quote: e.quote,
          headerLine: e.headerLine,
          dataRecords: e.dataRecords,
          footerRecords: e.footerRecords,
          removedTotal: e.removed,
        },
        'located',
      );
      t.same(r.header, e.header, 'header');
      t.equal(r.headerHash, computeHeaderHash(e.header), 'header hash');
      t.equal(r.removed.length, e.removed, 'every removed row listed');
      t.equal(r.sampleRows.length, Math.min(50, e.dataRecords), 'sample rows');
      t.equal(r.sheet?.name, e.sheet, 'sheet');
      t.equal(r.archiveEntry?.name, e.archiveEntry, 'archive entry');
      if (e.preambleValues) t.same({ ...r.preambleValues }, e.preambleValues, 'preamble values');
      if (e.decimalComma !== undefined)
        t.equal(
          r.decimalComma[e.netEarningsColumn],
          e.decimalComma,
          'decimal comma of the money column',
        );
      for (const [column, order] of Object.entries(e.dateOrder ?? {}))
        t.equal(r.dateOrder[column], order, `date order of ${column}`);
      // a clean UTF-8 file is read where it lies; anything else is a converted copy
      const clean =
        e.format === 'delimited' &&
        e.container === 'none' &&
        e.encoding === 'utf-8' &&
        !e.file.includes('soundexchange');
      t.equal(
        r.csvPath === source,
        clean,
        clean ? 'the original file is used' : 'a converted copy is used',
      );
      const bytes = await readFile(r.csvPath);
      t.notOk(bytes[0] === 0xef && bytes[1] === 0xbb, 'no BOM');
      t.notOk(bytes.includes(0), 'no NUL');

      const rows = await dataRows(r);
      t.equal(rows.length, e.dataRecords, 'records read back');
      const net = r.header.indexOf(e.netEarningsColumn);
      t.ok(net >= 0, 'money column present');
      const comma = r.decimalComma[e.netEarningsColumn] ?? false;
      t.equal(
        exactSum(
          rows.map((x) => x[net] ?? ''),
          comma,
        ),
        e.netEarningsSum,
        'net earnings to the last decimal',
      );
      if (e.unitsColumn) {
        const units = r.header.indexOf(e.unitsColumn);
        t.equal(
          exactSum(
            rows.map((x) => x[units] ?? ''),
            false,
          ),
          e.unitsSum,
          'units',
        );
      }
    });
  }
});

t.test(
  'the sampled path (head and tail only) gives the same answer as reading everything',
  async (t) => {
    for (const e of await expectations()) {
      const input = {
        sourcePath: path.join(STATEMENTS, e.file),
        fileName: e.file,
        workDir: await workDir(),
      };
      const whole = await locate(input);
      const sampled = await locate(
        { ...input, workDir: await workDir() },
        { headBytes: 2048, tailBytes: 700 },
      );
      const pick = (x: LocatedTable) => ({
        headerLine: x.headerLine,
        header: x.header,
        dataRecords: x.dataRecords,
        footerRecords: x.footerRecords,
        removedTotal: x.removedTotal,
        removed: x.removed.map((r) => [r.line, r.reason]),
        preambleValues: { ...x.preambleValues },
        footerTotals: x.footerTotals.map((f) => ({ label: f.label, values: { ...f.values } })),
      });
      t.same(pick(sampled), pick(whole), e.file);
    }
  },
);

t.test('what the reader says about particular files', async (t) => {
  const apple = await run(path.join(STATEMENTS, 'apple-80012345_0324_EU.txt'));
  t.same(
    apple.footerTotals.map((f) => f.label),
    ['Total_Rows', 'Total_Amount', 'Total_Units'],
  );
  t.same(
    { ...apple.footerTotals[0]!.values },
    { 'End Date': '18' },
    'a trailer value is keyed by the header of its column',
  );
  t.same(
    apple.removed.map((r) => r.reason),
    ['footer', 'footer', 'footer'],
  );

  const cdbaby = await run(path.join(STATEMENTS, 'cdbaby.txt'));
  const barcode = cdbaby.header.indexOf('Barcode');
  t.match(
    cdbaby.sampleRows[0]![barcode],
    /^88\d{10}$/,
    'one pair of literal quotes around a TSV barcode is stripped',
  );

  const distrokid = await run(path.join(STATEMENTS, 'distrokid-legacy.tsv'));
  t.equal(distrokid.quote, '', 'a tab file with 12" in a title reads without quoting');
  t.ok(distrokid.sampleRows.some((r) => r.includes('Summer 12" Mix')));

  const bmg = await run(path.join(STATEMENTS, 'bmg-publishing-statement.csv'));
  t.same(
    bmg.removed.map((r) => [r.line, r.reason]),
    [
      [0, 'preamble'],
      [1, 'preamble'],
      [2, 'preamble'],
      [3, 'preamble'],
      [4, 'preamble'],
      [5, 'blank'],
      [29, 'blank'],
      [30, 'footer'],
    ],
  );
  t.equal(bmg.footerTotals[0]!.label, 'Total');
  t.equal(
    bmg.footerTotals[0]!.values['Royalty Payable'],
    JSON.parse(
      await readFile(path.join(STATEMENTS, 'bmg-publishing-statement.csv.expected.json'), 'utf8'),
    ).netEarningsSum.replace('.', ','),
  );

  const mlc = await run(path.join(STATEMENTS, 'mlc-royalty-detail.csv'));
  t.same(
    mlc.removed.map((r) => [r.line, r.reason]),
    [
      [13, 'blank'],
      [14, 'repeated_header'],
      [15, 'blank'],
    ],
    'concatenated exports: the blank lines and the second header are skipped, the data goes on',
  );

  const bmi = await run(path.join(STATEMENTS, 'bmi-royalty-statement.xlsx'));
  t.same(
    bmi.sheet!.candidates.map((c) => [c.name, c.skipped ?? null]),
    [
      ['Summary', 'summary sheet'],
      ['Royalty Detail', null],
      ['Lookup', 'hidden sheet'],
    ],
  );
  t.equal(bmi.sheet!.index, 1);
  const perfDate = bmi.header.indexOf('PERF DATE');
  t.match(bmi.sampleRows[0]![perfDate], /^2023-1[0-2]-\d\d$/, 'dates as ISO');
  t.equal(bmi.footerTotals[0]!.label, 'TOTAL');

  const cargo = await run(path.join(STATEMENTS, 'cargo-digital.zip'));
  t.same(
    cargo.archiveEntry!.candidates.map((c) => [c.name, c.skipped ?? null]),
    [
      ['Harbour_Records-summary.csv', 'summary file'],
      ['Harbour_Records-stores.csv', 'another table scored higher'],
      ['Harbour_Records-royalty_extended.csv', null],
    ],
  );
});

t.test(
  'table structure: duplicate names, trailing delimiters, unlabeled totals, a summary table after the detail',
  async (t) => {
    const dir = await workDir();
    const ragged = path.join(dir, 'ragged.csv');
    await writeFile(
      ragged,
      'Title,Artist,Units,Amount,Amount,\nEmber,Orla,3,1.50,2,\nHollow,Orla,4,2.25,3,extra\n,,,3.75,,\n',
    );
    const r1 = await run(ragged);
    t.same(r1.header, ['Title', 'Artist', 'Units', 'Amount', 'Amount (2)']);
    t.match(r1, { dataRecords: 2, footerRecords: 1 });
    t.same(
      r1.footerTotals.map((f) => ({ label: f.label, values: { ...f.values } })),
      [{ label: '', values: { Amount: '3.75' } }],
    );

    const summary = path.join(dir, 'apple-summary.txt');
    await writeFile(
      summary,
      [
        'Start Date\tEnd Date\tUPC\tISRC/ISBN\tQuantity\tPartner Share\tExtended Partner Share\tPartner Share Currency\tCountry Of Sale',
        '03/03/2024\t03/30/2024\t859417374469\tDEUM72331517\t3\t0.69\t2.07\tEUR\tDE',
        '03/03/2024\t03/30/2024\t859417374470\tDEUM72331518\t1\t0.69\t0.69\tEUR\tFR',
        '',
        'Country Of Sale\tPartner Share Currency\tQuantity\tExtended Partner Share',
        'DE\tEUR\t3\t2.07',
        'FR\tEUR\t1\t0.69',
        '',
      ].join('\n'),
    );
    const r2 = await run(summary);
    t.equal(r2.header[0], 'Start Date', 'the detail header, not the summary one');
    t.match(r2, { dataRecords: 2, footerRecords: 3 });
    t.same(
      r2.removed.map((x) => [x.line, x.reason]),
      [
        [3, 'blank'],
        [4, 'summary'],
        [5, 'summary'],
        [6, 'summary'],
      ],
    );

    // a record's line is its first physical line: quoted line breaks above and in the data count
    const multiline = path.join(dir, 'multiline.csv');
    await writeFile(
      multiline,
      '"Statement for\nOrla",,,\nTitle,Artist,Units,Amount\n"Ember\n(live)",Orla,3,1.50\nHollow,Orla,4,2.25\nTotal,,,3.75\n',
    );
    for (const limits of [undefined, { headBytes: 70, tailBytes: 20 }]) {
      const r3 = await locate(
        { sourcePath: multiline, fileName: 'multiline.csv', workDir: await workDir() },
        limits,
      );
      t.match(
        r3,
        { headerLine: 2, dataRecords: 2, footerRecords: 1 },
        limits ? 'sampled' : 'whole',
      );
      t.same(
        r3.removed.map((x) => [x.line, x.reason]),
        [
          [0, 'preamble'],
          [6, 'footer'],
        ],
      );
    }
  },
);

t.test(
  'a detail table followed by a per-country summary block: the detail header, the summary removed (Apple)',
  async (t) => {
    const dir = await workDir();
    const expected = JSON.parse(
      await readFile(path.join(STATEMENTS, 'apple-80012345_0324_EU.txt.expected.json'), 'utf8'),
    ) as Expected;
    // the header and the 18 detail rows, without the Total_ trailer
    const detail = (await readFile(path.join(STATEMENTS, expected.file), 'utf8'))
      .trimEnd()
      .split('\n')
      .slice(0, 19);
    const appleSummary = [
      'Country Of Sale\tPartner Share Currency\tQuantity\tExtended Partner Share',
      'AT\tEUR\t50\t200.00',
      'NL\tEUR\t46\t185.17',
    ];
    const genericSummary = ['Country\tQuantity\tAmount', 'AT\t50\t200.00', 'NL\t46\t185.17'];
    const variants: [string, string[], boolean][] = [
      ['Apple summary after a blank line', appleSummary, true],
      ['Apple summary right under the detail', appleSummary, false],
      ['a generic summary after a blank line', genericSummary, true],
      ['a generic summary right under the detail', genericSummary, false],
    ];
    for (const [name, summary, blank] of variants) {
      const file = path.join(dir, `summary-${variants.findIndex((v) => v[0] === name)}.txt`);
      await writeFile(file, [...detail, ...(blank ? [''] : []), ...summary].join('\n') + '\n');
      const at = blank ? 20 : 19;
      const removed = [
        ...(blank ? [[19, 'blank']] : []),
        [at, 'summary'],
        [at + 1, 'summary'],
        [at + 2, 'summary'],
      ];
      // whole, and from a head and a tail sample (the summary block in the tail)
      for (const limits of [undefined, { headBytes: 2048, tailBytes: 700 }]) {
        const label = `${name}${limits ? ', sampled' : ''}`;
        const r = await locate(
          { sourcePath: file, fileName: path.basename(file), workDir: await workDir() },
          limits,
        );
        t.match(
          r,
          { headerLine: 0, dataRecords: 18, footerRecords: 3, removedTotal: removed.length },
          `${label}: located`,
        );
        t.same(r.header, expected.header, `${label}: the detail header`);
        t.same(
          r.removed.map((x) => [x.line, x.reason]),
          removed,
          `${label}: the summary block removed as summary rows`,
        );
        t.same(r.footerTotals, [], `${label}: no summary row taken for a total`);
        const rows = await dataRows(r);
        t.equal(rows.length, 18, `${label}: records read back`);
        t.equal(
          exactSum(
            rows.map((x) => x[r.header.indexOf(expected.netEarningsColumn)] ?? ''),
            false,
          ),
          expected.netEarningsSum,
          `${label}: net earnings`,
        );
        t.equal(
          exactSum(
            rows.map((x) => x[r.header.indexOf('Quantity')] ?? ''),
            false,
          ),
          expected.unitsSum,
          `${label}: units`,
        );
      }
    }
  },
);

const HOSTILE_CASES: [string, string][] = [
  ['empty.csv', 'FILE_EMPTY'],
  ['whitespace-only.csv', 'FILE_NO_DATA'],
  ['only-delimiters.csv', 'FILE_NO_DATA'],
  ['login-page.csv', 'FILE_IS_HTML'],
  // a PDF (named .csv) cut after its first object: read as a PDF, refused as damaged
  ['statement-pdf.csv', 'FILE_DAMAGED'],
  ['password-protected.xlsx', 'FILE_ENCRYPTED'],
  ['legacy-biff.xls', 'FILE_DAMAGED'],
  ['opendocument.ods', 'FILE_UNSUPPORTED_FORMAT'],
  ['xml-spreadsheet-2003.xls', 'FILE_UNSUPPORTED_FORMAT'],
  ['zip-bomb.zip', 'FILE_TOO_LARGE_DECOMPRESSED'],
  ['truncated.zip', 'FILE_DAMAGED'],
  ['truncated.xlsx', 'FILE_DAMAGED'],
  ['xxe-shared-strings.xlsx', 'FILE_DAMAGED'],
  ['unclosed-quote.csv', 'FILE_DAMAGED'],
  ['headerless-records.csv', 'HEADER_NOT_FOUND'],
  ['subtotal-blocks.csv', 'FILE_INTERLEAVED_TOTALS'],
];

t.test(
  'hostile uploads are refused with their errorCode and a message naming the problem',
  async (t) => {
    for (const [file, errorCode] of HOSTILE_CASES) {
      const result = await locateTable({
        sourcePath: path.join(HOSTILE, file),
        fileName: file,
        workDir: await workDir(),
      });
      t.match(result, { ok: false, errorCode, message: /\w+ \w+ \w+/ }, file);
      if (!result.ok)
        t.notMatch(
          result.message,
          /root:|\/bin\/|at \w+ \(/,
          `${file}: no file contents, no stack`,
        );
    }
  },
);

t.test('a header-only file is a statement with no data rows', async (t) => {
  const r = await run(path.join(HOSTILE, 'header-only.csv'));
  t.match(r, { ok: true, dataRecords: 0, footerRecords: 0, headerLine: 0 });
  t.equal(r.header.length, 9);
});

t.test('header cells named __proto__ or constructor pollute nothing', async (t) => {
  const r = await run(path.join(HOSTILE, 'proto-header.csv'));
  t.same(r.header, [
    '__proto__',
    'constructor',
    'prototype',
    'hasOwnProperty',
    'toString',
    'Amount',
  ]);
  t.equal(r.dataRecords, 3);
  t.ok(Object.hasOwn(r.preambleValues, '__proto__'), 'an own key, not the prototype');
  t.equal(r.preambleValues['__proto__' as keyof typeof r.preambleValues], '{"polluted":"yes"}');
  t.equal(({} as Record<string, unknown>).polluted, undefined);
  t.equal(Object.getPrototypeOf({}), Object.prototype);
  t.equal(r.decimalComma.Amount, false);
});

t.test('limits are enforced while inflating and reading', async (t) => {
  const dir = await workDir();
  // a gzip bomb: 64 MiB of zeros in about 64 KB
  const gz = path.join(dir, 'bomb.csv.gz');
  await writeFile(gz, gzipSync(Buffer.alloc(64 * 1024 * 1024)));
  t.match(
    await locateTable({ sourcePath: gz, fileName: 'bomb.csv.gz', workDir: await workDir() }),
    { ok: false, errorCode: 'FILE_TOO_LARGE_DECOMPRESSED' },
  );

  // an honest zip over a small cap
  const csv = Buffer.from(`Title,Amount\n${'Paper Boats,1.00\n'.repeat(200_000)}`);
  const zip = path.join(dir, 'big.zip');
  await writeFile(zip, zipFiles([{ name: 'statement.csv', data: csv }]));
  t.match(
    await locateTable({
      sourcePath: zip,
      fileName: 'big.zip',
      workDir: await workDir(),
      limits: { maxDecompressedBytes: 1024 * 1024 },
    }),
    {
      ok: false,
      errorCode: 'FILE_TOO_LARGE_DECOMPRESSED',
    },
  );
  t.match(
    await locateTable({
      sourcePath: zip,
      fileName: 'big.zip',
      workDir: await workDir(),
      limits: { maxEntries: 0.5 },
    }),
    { ok: false, errorCode: 'FILE_TOO_LARGE_DECOMPRESSED' },
  );
  t.match(
    await run(zip),
    { dataRecords: 200_000, container: 'zip' },
    'within the default limits it is read',
  );

  // a zip whose directory understates the entry's size: inflating stops at the declared size
  const lying = zipFiles([{ name: 'statement.csv', data: csv }]);
  const cd = lying.readUInt32LE(lying.length - 6);
  lying.writeUInt32LE(1000, 22);
  lying.writeUInt32LE(1000, cd + 24);
  const lyingPath = path.join(dir, 'lying.zip');
  await writeFile(lyingPath, lying);
  t.match(
    await locateTable({ sourcePath: lyingPath, fileName: 'lying.zip', workDir: await workDir() }),
    { ok: false, errorCode: 'FILE_DAMAGED' },
  );

  // a 10 MB field that never closes, and a 10 MB line
  const field = path.join(dir, 'field.csv');
  await writeFile(field, `Title,Amount\n"${'x'.repeat(10 * 1024 * 1024)}\n`);
  t.match(
    await locateTable({ sourcePath: field, fileName: 'field.csv', workDir: await workDir() }),
    { ok: false, errorCode: 'FIELD_TOO_LARGE', message: /line 2/ },
  );
  const longLine = path.join(dir, 'line.csv');
  await writeFile(longLine, `Title,Amount\n${'y'.repeat(10 * 1024 * 1024)},1\n`);
  t.match(
    await locateTable({ sourcePath: longLine, fileName: 'line.csv', workDir: await workDir() }),
    { ok: false, errorCode: 'FIELD_TOO_LARGE' },
  );
  const small = path.join(dir, 'small-field.csv');
  await writeFile(small, `Title,Amount\n${'z'.repeat(5000)},1\n`);
  t.match(
    await locateTable({
      sourcePath: small,
      fileName: 'small-field.csv',
      workDir: await workDir(),
      limits: { maxFieldBytes: 1000 },
    }),
    { ok: false, errorCode: 'FIELD_TOO_LARGE' },
  );

  // the time budget
  const slow = path.join(dir, 'slow.csv');
  await writeFile(slow, `Title,Amount\n${'Paper Boats,1.00\n'.repeat(1_500_000)}`);
  t.match(
    await locateTable({
      sourcePath: slow,
      fileName: 'slow.csv',
      workDir: await workDir(),
      limits: { timeBudgetMs: 1 },
    }),
    { ok: false, errorCode: 'FILE_TIME_BUDGET_EXCEEDED' },
  );
});

t.test('encodings, byte-level debris and line breaks', async (t) => {
  const dir = await workDir();
  const text =
    'Track Title,Artist,Quantity,Net Revenue\r\nCafé Lumière,Zoë,3,1.25\r\nŒuvre € Noire,Chloé,2,0.75\r\n';
  const cases: [string, Buffer, string][] = [
    [
      'utf16be-bom.csv',
      Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode(text, 'utf-16be')]),
      'utf-16be',
    ],
    ['utf16le-nobom.csv', Buffer.from(text, 'utf16le'), 'utf-16le'],
    ['utf16be-nobom.csv', iconv.encode(text, 'utf-16be'), 'utf-16be'],
    ['cp1252.csv', iconv.encode(text, 'windows-1252'), 'windows-1252'],
    [
      'debris.csv',
      Buffer.concat([Buffer.from(text.replace('Zoë', 'Zo\0ë')), Buffer.from([0x1a])]),
      'utf-8',
    ],
    ['mac.csv', Buffer.from(text.replace(/\r\n/g, '\r')), 'utf-8'],
    ['mixed-breaks.csv', Buffer.from(text.replace('\r\n', '\n')), 'utf-8'],
  ];
  for (const [name, bytes, encoding] of cases) {
    const file = path.join(dir, name);
    await writeFile(file, bytes);
    const r = await run(file);
    t.equal(r.encoding, encoding, `${name}: encoding`);
    t.not(r.csvPath, file, `${name}: converted`);
    t.same(r.header, ['Track Title', 'Artist', 'Quantity', 'Net Revenue'], `${name}: header`);
    t.same(
      r.sampleRows,
      [
        ['Café Lumière', 'Zoë', '3', '1.25'],
        ['Œuvre € Noire', 'Chloé', '2', '0.75'],
      ],
      `${name}: text`,
    );
    const out = await readFile(r.csvPath, 'utf8');
    t.notOk(out.includes('\r'), `${name}: LF line breaks`);
  }
  // lines from a UTF-8 export concatenated with lines from a Windows-1252 one
  const mixed = path.join(dir, 'mixed.csv');
  await writeFile(
    mixed,
    Buffer.concat([
      Buffer.from('Track Title,Net Revenue\nCafé,1.00\n'),
      iconv.encode('Crème,2.00\n', 'windows-1252'),
    ]),
  );
  const m = await run(mixed);
  t.equal(m.encoding, 'utf-8+windows-1252');
  t.same(m.sampleRows, [
    ['Café', '1.00'],
    ['Crème', '2.00'],
  ]);
  // `sep=` names the delimiter and is not a preamble row
  const sep = path.join(dir, 'sep.csv');
  await writeFile(sep, 'sep=|\nTrack Title|Net Revenue\nCafé|1,00\n');
  t.match(await run(sep), { delimiter: '|', headerLine: 0, removedTotal: 0, dataRecords: 1 });
});

/** Every entry of a zip, in its order. */
function unzipAll(bytes: Buffer): Promise<{ name: string; data: Buffer }[]> {
  return new Promise((resolve, reject) => {
    const out: { name: string; data: Buffer }[] = [];
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('not a zip'));
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error('no stream'));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            out.push({ name: entry.fileName, data: Buffer.concat(chunks) });
            zip.readEntry();
          });
          stream.on('error', reject);
        });
      });
      zip.on('end', () => resolve(out));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

t.test(
  'workbooks whose worksheet part comes before xl/workbook.xml (found by CI: exceljs writes its parts in varying order)',
  async (t) => {
    const dir = await workDir();
    const wb = new ExcelJS.Workbook();
    wb.properties.date1904 = true;
    wb.addWorksheet('Cover').addRow(['Statement for Q1']);
    const ws = wb.addWorksheet('Royalties');
    ws.addRow(['Sale Date', 'Title', 'Artist', 'Royalty Amount']);
    ws.addRow([new Date(Date.UTC(2024, 2, 15)), 'Paper Boats', 'Orla Finn', 1.25]);
    ws.getCell('A2').numFmt = 'yyyy-mm-dd';
    const entries = await unzipAll(Buffer.from(await wb.xlsx.writeBuffer()));
    // shared strings and relationships first, then the worksheets, the workbook part last
    const rank = (name: string) =>
      name === 'xl/workbook.xml'
        ? 3
        : name.startsWith('xl/worksheets/')
          ? 2
          : name === 'xl/sharedStrings.xml' || name.endsWith('.rels')
            ? 1
            : 0;
    const reordered = [...entries].sort((a, b) => rank(a.name) - rank(b.name));
    t.ok(
      reordered.findIndex((e) => e.name === 'xl/sharedStrings.xml') <
        reordered.findIndex((e) => e.name.startsWith('xl/worksheets/sheet')),
    );
    const file = path.join(dir, 'late-workbook-part.xlsx');
    await writeFile(file, zipFiles(reordered));
    const r = await run(file);
    t.match(r, {
      format: 'xlsx',
      header: ['Sale Date', 'Title', 'Artist', 'Royalty Amount'],
      dataRecords: 1,
    });
    t.equal(r.sheet!.name, 'Royalties', 'the sheets keep their names');
    t.same(
      r.sampleRows,
      [['2024-03-15', 'Paper Boats', 'Orla Finn', '1.25']],
      'and the workbook date system',
    );
  },
);

t.test('workbooks: the 1904 date system, empty and header-only sheets', async (t) => {
  const dir = await workDir();
  const wb = new ExcelJS.Workbook();
  wb.properties.date1904 = true;
  const ws = wb.addWorksheet('Statement');
  ws.addRow(['Sale Date', 'Title', 'Units', 'Net Revenue']);
  ws.addRow([new Date(Date.UTC(2024, 2, 15)), 'Paper Boats', 3, 0.0000123]);
  ws.getCell('A2').numFmt = 'yyyy-mm-dd';
  wb.addWorksheet('Empty');
  const file = path.join(dir, 'mac.xlsx');
  await wb.xlsx.writeFile(file);
  const r = await run(file);
  t.same(
    r.sampleRows,
    [['2024-03-15', 'Paper Boats', '3', '0.0000123']],
    'dates in the 1904 system, numbers without exponents',
  );
  t.same(
    r.sheet!.candidates.map((c) => [c.name, c.skipped ?? null]),
    [
      ['Statement', null],
      ['Empty', 'empty'],
    ],
  );

  const headerOnly = new ExcelJS.Workbook();
  headerOnly.addWorksheet('Royalties').addRow(['Title', 'Artist', 'Royalty Amount']);
  const h = path.join(dir, 'header-only.xlsx');
  await headerOnly.xlsx.writeFile(h);
  t.match(await run(h), {
    format: 'xlsx',
    dataRecords: 0,
    header: ['Title', 'Artist', 'Royalty Amount'],
  });

  const empty = new ExcelJS.Workbook();
  empty.addWorksheet('Sheet1');
  const e = path.join(dir, 'empty.xlsx');
  await empty.xlsx.writeFile(e);
  t.match(await locateTable({ sourcePath: e, fileName: 'empty.xlsx', workDir: await workDir() }), {
    ok: false,
    errorCode: 'FILE_NO_DATA',
  });
});

t.test(
  'a 1,000,000-row statement is located from samples and counted without parsing',
  async (t) => {
    const dir = await workDir();
    const file = path.join(dir, 'distrokid-large.tsv');
    const header =
      'Reporting Date\tSale Month\tStore\tArtist\tTitle\tISRC\tUPC\tQuantity\tTeam Percentage\tSong/Album\tCountry of Sale\tSongwriter Royalties Withheld\tEarnings (USD)';
    const out = createWriteStream(file);
    const rows = 1_000_000;
    let chunk: string[] = [header];
    for (let i = 0; i < rows; i++) {
      chunk.push(
        `2024-03-${String((i % 28) + 1).padStart(2, '0')}\t2024-02\tSpotify\tOrla Finn\tTrack ${i}\tUSRC1240${String(i % 10000).padStart(4, '0')}\t\t${i % 900}\t100\tSong\tUS\t0\t0.00${i % 1000}1`,
      );
      if (i === 500_000) chunk.push('', header);
      if (chunk.length >= 20_000) {
        if (!out.write(`${chunk.join('\n')}\n`))
          await new Promise<void>((r) => out.once('drain', () => r()));
        chunk = [];
      }
    }
    chunk.push('Total\t\t\t\t\t\t\t\t\t\t\t\t1234.5678');
    out.write(`${chunk.join('\n')}\n`);
    await new Promise<void>((r) => out.end(() => r()));
    const started = Date.now();
    const r = await run(file);
    const elapsed = Date.now() - started;
    t.match(r, {
      dataRecords: rows,
      footerRecords: 1,
      removedTotal: 3,
      headerLine: 0,
      csvPath: file,
      encoding: 'utf-8',
      delimiter: '\t',
    });
    t.same(
      r.removed.map((x) => [x.line, x.reason]),
      [
        [500_002, 'blank'],
        [500_003, 'repeated_header'],
        [1_000_003, 'footer'],
      ],
    );
    t.same({ ...r.footerTotals[0]!.values }, { 'Earnings (USD)': '1234.5678' });
    t.comment(
      `located in ${elapsed} ms (speed is measured by npm run bench:ingest, not asserted here)`,
    );
  },
);

t.test('through the real piscina pool', async (t) => {
  const pool = createThreadPool({
    maxThreads: 1,
    maxQueue: 8,
    idleTimeoutMs: 2000,
    maxOldGenerationMb: 256,
    warm: 0,
  });
  t.teardown(() => pool.close());
  const e = JSON.parse(
    await readFile(path.join(STATEMENTS, 'believe.csv.expected.json'), 'utf8'),
  ) as Expected;
  const r = await pool.locateTable({
    sourcePath: path.join(STATEMENTS, e.file),
    fileName: e.file,
    workDir: await workDir(),
    limits: { timeBudgetMs: 60_000 },
  });
  t.match(r, {
    encoding: 'utf-8-bom',
    delimiter: ';',
    dataRecords: e.dataRecords,
    headerHash: computeHeaderHash(e.header),
  });
  t.equal(r.decimalComma['Net Revenue'], true);
  const xlsx = await pool.locateTable({
    sourcePath: path.join(STATEMENTS, 'bmi-royalty-statement.xlsx'),
    fileName: 'bmi-royalty-statement.xlsx',
    workDir: await workDir(),
  });
  t.match(xlsx, { format: 'xlsx', sheet: { name: 'Royalty Detail' }, dataRecords: 30 });
  await t.rejects(
    pool.locateTable({
      sourcePath: path.join(HOSTILE, 'statement-pdf.csv'),
      fileName: 'statement.csv',
      workDir: await workDir(),
    }),
    { name: 'AppError', errorCode: 'FILE_DAMAGED', code: 'BAD_REQUEST' },
  );
  await t.rejects(
    pool.locateTable({
      sourcePath: path.join(HOSTILE, 'zip-bomb.zip'),
      fileName: 'statement.zip',
      workDir: await workDir(),
    }),
    { name: 'AppError', errorCode: 'FILE_TOO_LARGE_DECOMPRESSED' },
  );
  const proto = await pool.locateTable({
    sourcePath: path.join(HOSTILE, 'proto-header.csv'),
    fileName: 'proto-header.csv',
    workDir: await workDir(),
  });
  t.ok(
    Object.hasOwn(proto.preambleValues, '__proto__'),
    'a __proto__ key survives the thread boundary as an own key',
  );
  t.equal(({} as Record<string, unknown>).polluted, undefined);
  await t.rejects(pool.locateTable({ fileName: 5 } as never), {
    name: 'AppError',
    errorCode: 'VALIDATION_FAILED',
  });
});
