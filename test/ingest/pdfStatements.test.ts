// PDF statements uploaded through the API and processed by the job runner (the file reader in the
// thread pool, the normalizer, DuckDB): three table styles (a ruled grid, white-space columns, a
// collecting society's works closed by subtotals) read with an organization's stored mapping to
// exact sums and row counts, their stated totals exposed as a CSV footer's are; a scan, a password,
// a damaged file, a wrong subtotal, too many pages and hostile cell text refused or read exactly;
// a PDF of a layout another organization has never mapped, mapped automatically and proven.
// The fixtures are built by fixtures/pdf/build-pdf.ts.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import PDFDocument from 'pdfkit';
import t from 'tap';
import { startTestHandler } from '../helpers/handler.ts';
import { createRightsholder, insertMapping, putFile, waitForStatement } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { repoRoot } from '../setup/paths.ts';
import { TITLE_AMOUNT_HEADER, titleAmountFields } from '../helpers/sampleMapping.ts';

const PDFS = path.join(repoRoot, 'fixtures', 'pdf');
const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'PDF Label');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'PDF Artist');

const other = await newOrganization(srv, 'PDF Newcomer');
const theirArtist = await createRightsholder(other.client, other.organizationId, 'Their Artist');

/** Uploads a PDF of fixtures/pdf (or these bytes) for the organization and waits for it to settle. */
const upload = async (name: string, bytes?: Buffer, by = owner, rightsholderId = artist) => {
  const up = await putFile(
    by.client,
    by.organizationId,
    rightsholderId,
    name,
    bytes ?? (await readFile(path.join(PDFS, name))),
  );
  return waitForStatement(by.client, by.organizationId, up.statementId, 180_000);
};
/** The organization's own mapping of a layout, stored as mapping.create stores one: its id. */
const mapped = (name: string, header: string[], fields: Record<string, unknown>) =>
  insertMapping(srv.deps.pool, org, name, header, fields);
const removedRows = async (statementId: string) => {
  const res = await owner.client.mutate('fileStorage.downloadStatementFile', {
    organizationId: org,
    type: 'removed',
    file: statementId,
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return parse(await (await fetch(res.data.url)).text(), { relaxColumnCount: true }).slice(
    1,
  ) as string[][];
};
const flagKinds = (s: { flags: { kind: string }[] }) => s.flags.map((f) => f.kind).sort();
const sample = async (statementId: string, mappingId: string) => {
  const res = await owner.client.mutate('mapping.processSample', {
    organizationId: org,
    statementId,
    mappingId,
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data.rows as Record<string, string | null>[];
};

// ---- the layouts the organization has mapped -----------------------------------------------------
const gridHeader = [
  'Sale Month',
  'Store',
  'Territory',
  'ISRC',
  'Track Title',
  'Units',
  'Net Revenue (EUR)',
];
const gridMapping = await mapped('Grid distributor', gridHeader, {
  stmtYear: { constant: '2024' },
  stmtPeriod: { constant: '2' },
  stmtCadence: { constant: 'Q' },
  currency: { constant: 'EUR' },
  royaltyEarnings: { column: 'Net Revenue (EUR)' },
  units: { column: 'Units' },
  rawTitle: { column: 'Track Title' },
  isrc: { column: 'ISRC' },
  country: { column: 'Territory' },
  source: { column: 'Store' },
});
const publisherHeader = [
  'Song Title',
  'Writer(s)',
  'Source',
  'Territory',
  'Quantity',
  'Gross',
  'Share %',
  'Royalty',
];
const publisherMapping = await mapped('Publisher', publisherHeader, {
  stmtYear: { constant: '2023' },
  stmtPeriod: { constant: '2' },
  stmtCadence: { constant: 'H' },
  currency: { constant: 'USD' },
  royaltyEarnings: { column: 'Royalty' },
  units: { column: 'Quantity' },
  rawTitle: { column: 'Song Title' },
  composers: { column: 'Writer(s)' },
  country: { column: 'Territory' },
  salesType: { column: 'Source' },
});
const societyHeader = [
  'Work No',
  'Work Title',
  'Territory',
  'Source',
  'Period',
  'Perfs',
  'Share %',
  'Amount',
];
const societyMapping = await mapped('Society', societyHeader, {
  stmtYear: { constant: '2024' },
  stmtPeriod: { constant: '1' },
  stmtCadence: { constant: 'H' },
  currency: { constant: 'EUR' },
  royaltyEarnings: { column: 'Amount' },
  units: { column: 'Perfs' },
  rawTitle: { column: 'Work Title' },
  otherIdentifier: { column: 'Work No' },
  country: { column: 'Territory' },
  source: { column: 'Source' },
});
const twoColumns = TITLE_AMOUNT_HEADER;
const twoColumnsMapping = await mapped('Two columns', twoColumns, titleAmountFields);
const hostileTitles = [
  "x'); DROP TABLE statements; --",
  '=HYPERLINK("http://evil")',
  'Quote "this", and that',
];
const refusals: [string, string, RegExp][] = [
  ['scanned.pdf', 'FILE_PDF_NO_TEXT', /no text layer/],
  ['encrypted.pdf', 'FILE_ENCRYPTED', /password-protected/],
  ['truncated.pdf', 'FILE_DAMAGED', /damaged or incomplete/],
  [
    'society-wrong-subtotal.pdf',
    'FILE_INTERLEAVED_TOTALS',
    /"Subtotal" states 3\.846,39 under "Amount", which is neither the sum of the 4 rows it closes \(3845\.39\)/,
  ],
];

// every PDF uploaded at once, their jobs side by side; each subtest asserts its settled record
// (the wave runs in a subtest of its own: the subtests after it read what it settled)
const settled = new Map<string, any>();
let manyPagesMs = 0;
t.test('every PDF uploaded at once', async (t) => {
  const started = Date.now();
  const waits: [string, Promise<any>][] = [
    ['grid', upload('grid-distributor.pdf')],
    ['publisher', upload('whitespace-publisher.pdf')],
    ['society', upload('society-works.pdf')],
    ...refusals.map(([file]) => [file, upload(file)] as [string, Promise<any>]),
    [
      'manyPages',
      upload('many-pages.pdf', manyPages(5001)).then((s) => {
        manyPagesMs = Date.now() - started;
        return s;
      }),
    ],
    [
      'hostile',
      twoColumnPdf(
        twoColumns,
        hostileTitles.map((title, i) => [title, `${i + 1}.25`]),
      ).then((bytes) => upload('hostile.pdf', bytes)),
    ],
    ['unseen', upload('whitespace-publisher.pdf', undefined, other, theirArtist)],
  ];
  for (const [key, s] of await Promise.all(
    waits.map(async ([key, wait]) => [key, await wait] as const),
  ))
    settled.set(key, s);
  t.equal(settled.size, waits.length, 'every upload settled');
});

t.test(
  'a ruled grid over two pages: 46 rows, the units and money to the last decimal, the Total line as its stated total',
  async (t) => {
    const s = settled.get('grid');
    const mappingId = gridMapping;
    t.equal(s.status, 'processed', JSON.stringify(s.failureReason));
    t.equal(s.mappingId, mappingId);
    t.same(s.headers, gridHeader);
    // rowCount: the records under the header the normalizer reads (the data, page 2's header, the Total line)
    t.match(s, { rowCount: 48, keptRows: 46, netEarnings: '76.916400000000', units: '20103' });
    t.match(s.layout, {
      format: 'pdf',
      container: 'none',
      encoding: 'utf-8',
      headerLine: 4,
      footerRecords: 1,
    });
    t.same(s.layout.statedTotals, [
      { label: 'Total', values: { Units: '20103', 'Net Revenue (EUR)': '76.9164' }, kind: 'total' },
    ]);
    t.same(s.layout.preambleValues, {
      Label: 'Northern Records Ltd',
      'Reporting period': 'May - June 2024',
    });
    t.notOk(flagKinds(s).includes('footer_total_mismatch'), 'the stated total is the rows’ sum');
    // the cells as printed, a comma and quotes inside a title included
    const rows = await sample(s.id, mappingId);
    t.match(rows[0], {
      raw_title: 'Midnight, Again',
      isrc: 'GBAYE2400108',
      country: 'SE',
      royalty_earnings: '1.692500000000',
    });
    t.match(rows[2], { raw_title: 'The "Long" Way Home', royalty_earnings: '0.007800000000' });
  },
);

t.test(
  'white-space columns over three pages: thousands separators, a preamble, a total and a balance line kept apart',
  async (t) => {
    const s = settled.get('publisher');
    const mappingId = publisherMapping;
    t.equal(s.status, 'processed', JSON.stringify(s.failureReason));
    t.equal(s.mappingId, mappingId);
    // rowCount: the data, the header repeated on pages 2 and 3, the total and balance lines
    t.match(s, { rowCount: 79, keptRows: 75, netEarnings: '76746.790000000000', units: '6246298' });
    t.match(s.layout, { format: 'pdf', headerLine: 6, footerRecords: 2 });
    t.same(s.layout.statedTotals, [
      {
        label: 'Total Royalty',
        values: { Royalty: '76,746.79' },
        kind: 'total',
        value: '76,746.79',
      },
      {
        label: 'Balance Carried Forward',
        values: { Royalty: '0.00' },
        kind: 'balance',
        value: '0.00',
      },
    ]);
    t.same(s.layout.preambleValues, {
      Payee: 'Orla Lind',
      Account: 'HSP-00417',
      'Statement Period': '01/07/2023 - 31/12/2023',
      Currency: 'USD',
    });
    t.notOk(flagKinds(s).includes('footer_total_mismatch'));
    const rows = await sample(s.id, mappingId);
    t.match(rows[0], {
      raw_title: 'Paper Boats',
      composers: 'A. Moreau',
      units: '135672',
      royalty_earnings: '1777.760000000000',
    });
  },
);

t.test(
  "a society's works closed by subtotals, a member box on every page, decimal commas: the subtotals kept out and checked",
  async (t) => {
    const s = settled.get('society');
    const mappingId = societyMapping;
    t.equal(s.status, 'processed', JSON.stringify(s.failureReason));
    t.equal(s.mappingId, mappingId);
    // 59 usages; the page numbers, the member box repeated on page 2 and the 18 subtotals never reach the
    // table: rowCount is the usages, page 2's header and the total line
    t.match(s, { rowCount: 61, keptRows: 59, netEarnings: '67809.430000000000', units: '73023' });
    t.match(s.layout, { format: 'pdf', headerLine: 7, footerRecords: 1 });
    t.same(s.layout.statedTotals, [
      {
        label: 'Total distribution',
        values: { Amount: '67.809,43' },
        kind: 'total',
        value: '67.809,43',
      },
    ]);
    t.same(s.layout.preambleValues, {
      Distribution: '2024 H1',
      Period: '01.01.2024 - 30.06.2024',
      Currency: 'EUR',
    });
    t.notOk(flagKinds(s).includes('footer_total_mismatch'));
    const rows = await sample(s.id, mappingId);
    t.match(rows[2], {
      raw_title: 'Zugvögel',
      units: '1011',
      royalty_earnings: '467.570000000000',
    });
    // every line that is not a usage is in the removed variant, with its reason
    t.notOk(s.variants.includes('original-excel'), 'no workbook variant for a PDF');
    const reasons = new Map<string, string[]>();
    for (const [, reason, ...cells] of await removedRows(s.id))
      reasons.set(reason!, [...(reasons.get(reason!) ?? []), cells.filter(Boolean).join('|')]);
    t.same(reasons.get('page_margin'), [
      'Seite 1',
      'Member: Orla Lind|IPI: 00523456781|Distribution 2024/1',
      'Seite 2',
    ]);
    t.equal(reasons.get('subtotal')?.length, 18);
    t.equal(
      reasons.get('subtotal')![0],
      'Subtotal|1.844|2.187,00',
      "the first work's subtotal, as printed",
    );
  },
);

t.test(
  'refused with their errorCode, nothing stored: a scan, a password, a damaged file, a subtotal that is not its rows’ sum',
  async (t) => {
    for (const [file, errorCode, message] of refusals) {
      const s = settled.get(file);
      t.equal(s.status, 'failed', file);
      t.match(s.failureReason, { errorCode, message }, file);
      t.equal(s.netEarnings, null, `${file}: nothing stored`);
    }
  },
);

t.test('a PDF of 5,001 pages is refused before its pages are read', async (t) => {
  const s = settled.get('manyPages');
  t.equal(s.status, 'failed');
  t.match(s.failureReason, {
    errorCode: 'FILE_TOO_LARGE_DECOMPRESSED',
    message:
      'The PDF has 5,001 pages; at most 5,000 are read: download the statement as CSV or Excel.',
  });
  t.ok(manyPagesMs < 60_000, `no hang (${manyPagesMs} ms, with every other upload running)`);
});

t.test(
  'hostile cell text (SQL, formulas, quotes, a NUL-free control mix) comes out exactly as printed',
  async (t) => {
    const s = settled.get('hostile');
    const mappingId = twoColumnsMapping;
    t.equal(s.status, 'processed', JSON.stringify(s.failureReason));
    t.match(s, { rowCount: 3, netEarnings: '6.750000000000' });
    t.same(
      (await sample(s.id, mappingId)).map((r) => r.raw_title),
      hostileTitles,
    );
    const count = await srv.deps.pool.query(`SELECT count(*)::int AS n FROM statements`);
    t.ok(count.rows[0].n > 0, 'the statements table is still there');
  },
);

t.test(
  'a PDF of a layout the organization never mapped: mapped automatically, proven by its stated total',
  async (t) => {
    const s = settled.get('unseen');
    t.equal(
      s.status,
      'processed',
      JSON.stringify(s.failureReason ?? s.suggestedMapping?.automatic),
    );
    t.equal(s.mappingMatch.by, 'automatic');
    t.not(s.mappingId, publisherMapping, 'its own mapping, not the other organization’s');
    t.match(s, { keptRows: 75, netEarnings: '76746.790000000000', units: '6246298' });
    t.match(s, { currency: 'USD', stmtYear: 2023, stmtPeriod: 2, stmtCadence: 'H' });
    const flag = s.flags.find((f: { kind: string }) => f.kind === 'auto_mapped');
    t.match(flag, { severity: 'info', details: { mappingId: s.mappingId } });
    t.same(
      flag.details.proof.totals.map((x: any) => [x.label, x.stated, x.agrees]),
      [['Total Royalty', '76,746.79', true]],
      'the Total Royalty line proves it to the cent',
    );
    t.match(flag.details.facts, {
      currency: { value: 'USD' },
      period: { value: '2023H2' },
      payee: { value: 'Orla Lind' },
    });
  },
);

/** A PDF of `pages` pages sharing one content stream, written by hand (a few bytes a page). */
function manyPages(pages: number): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '',
    '<< /Length 44 >>\nstream\nBT /F1 12 Tf 72 720 Td (Title Amount) Tj ET\nendstream',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  const kids: string[] = [];
  for (let p = 0; p < pages; p++) {
    kids.push(`${objects.length + 1} 0 R`);
    objects.push(
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 3 0 R /Resources << /Font << /F1 4 0 R >> >> >>',
    );
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.join(' ')}] /Count ${pages} >>`;
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

/** A one-page PDF of a title column and a right-aligned amount column. */
async function twoColumnPdf(header: string[], rows: string[][]): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A4', margin: 36 });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve) => doc.on('end', () => resolve()));
  doc.font('Helvetica').fontSize(9);
  [header, ...rows].forEach((cells, i) => {
    doc.text(cells[0]!, 36, 60 + i * 14, { lineBreak: false });
    doc.text(cells[1]!, 400 - doc.widthOfString(cells[1]!), 60 + i * 14, { lineBreak: false });
  });
  doc.end();
  await done;
  return Buffer.concat(chunks);
}
