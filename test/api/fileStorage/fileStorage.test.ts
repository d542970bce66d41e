// fileStorage.getSample's default page past row 200, and downloadStatementFile's
// originalExcelFile (the name of the workbook download) and original-excel of a workbook unpacked
// from a zip or gzip, and the variants written on first request (a decoded text upload's single
// copy, an empty removed-rows file), at the handler with a real pipeline run.
import { readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import t, { type Test } from 'tap';
import yazl from 'yazl';
import {
  createRightsholder,
  insertMapping,
  putFile,
  uploadFixture,
  waitForStatement,
} from '../../helpers/ingest.ts';
import { appRouter } from '../../../src/api/index.ts';
import { schemasJson } from '../../../src/docs/schemas.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { HEADER, fields } from '../../helpers/sampleMapping.ts';
import { repoRoot } from '../../setup/paths.ts';
import { isError } from '../../helpers/outcome.ts';
import type { Outcome } from '../../helpers/trpc.ts';

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'Sample Label');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Sample Artist');
await insertMapping(srv.deps.pool, org, 'Sample layout', HEADER, fields);

// 1,000 data rows: the title of row i (0-based) is `Track i`
const lines = [
  HEADER.join(','),
  ...Array.from({ length: 1000 }, (_, i) => `2024-03,Track ${i},EUR,1,0.01`),
];
const big = await putFile(
  owner.client,
  org,
  artist,
  'thousand.csv',
  Buffer.from(lines.join('\n') + '\n'),
);
const bigStatus = (await waitForStatement(owner.client, org, big.statementId)).status;
const workbook = await uploadFixture(
  owner.client,
  org,
  artist,
  path.join(repoRoot, 'fixtures', 'statements', 'bmi-royalty-statement.xlsx'),
);
await waitForStatement(owner.client, org, workbook.statementId);

/** refused by the schema, for exactly this field */
function invalid(t: Test, res: Outcome<unknown>, field: string) {
  const error = isError(t, res, 'BAD_REQUEST', 'VALIDATION_FAILED');
  t.same(
    error?.data.fields?.map((f) => f.path),
    [field],
  );
}

const sample = (input: Record<string, unknown>) =>
  owner.client.queryUnchecked('fileStorage.getSample', {
    organizationId: org,
    file: big.statementId,
    ...input,
  });
const titles = (res: any) =>
  res.data.rows.map((r: unknown[]) => r[res.data.columns.indexOf('Title')]);

/**
 * Reprocesses a statement until processed: the object key `keyOf` reads before and after (they
 * differ), and whether the earlier object was removed once the new version was committed (the
 * record says processed a moment before).
 */
async function reprocessed(t: Test, statementId: string, keyOf: () => Promise<string>) {
  const before = await keyOf();
  const again = await owner.client.mutate('upload.uploadAction', {
    organizationId: org,
    action: { type: 'reprocess', statementId },
  });
  t.equal(again.ok, true);
  t.equal((await waitForStatement(owner.client, org, statementId)).status, 'processed');
  const after = await keyOf();
  t.not(after, before);
  let gone = false;
  for (
    const deadline = Date.now() + 20_000;
    !gone && Date.now() < deadline;
    await new Promise((r) => setTimeout(r, 50))
  )
    gone = (await srv.deps.store.head(before)) === undefined;
  return { before, after, gone };
}

t.test('getSample: endRow defaults to 200, or to startRow + 200 from row 200 on', async (t) => {
  t.equal(bigStatus, 'processed');
  const first = await sample({ type: 'trimmed' });
  t.same(
    [first.data.startRow, first.data.endRow, first.data.rows.length],
    [0, 200, 200],
    'the specification default',
  );
  t.same([titles(first)[0], titles(first)[199]], ['Track 0', 'Track 199']);
  const middle = await sample({ type: 'trimmed', startRow: 150 });
  t.same(
    [middle.data.startRow, middle.data.endRow, titles(middle)[0], titles(middle).at(-1)],
    [150, 200, 'Track 150', 'Track 199'],
    'up to 200 below it',
  );
  // the next page after the default one; before, 200..200 was empty and 300..200 refused
  const next = await sample({ type: 'trimmed', startRow: 200 });
  t.same(
    [next.data.startRow, next.data.endRow, titles(next)[0], titles(next).at(-1)],
    [200, 400, 'Track 200', 'Track 399'],
  );
  const later = await sample({ type: 'trimmed', startRow: 300 });
  t.equal(later.ok, true, 'startRow 300 without endRow is a page, not VALIDATION_FAILED');
  t.same(
    [later.data.startRow, later.data.endRow, titles(later)[0], titles(later).at(-1)],
    [300, 500, 'Track 300', 'Track 499'],
  );
  // near the end: what there is
  const tail = await sample({ type: 'trimmed', startRow: 900 });
  t.same([tail.data.endRow, tail.data.rows.length, titles(tail).at(-1)], [1000, 100, 'Track 999']);
  const normalized = await sample({ type: 'normalized', startRow: 999 });
  t.same([normalized.data.endRow, normalized.data.rows.length], [1000, 1]);
  t.equal(normalized.data.rows[0][normalized.data.columns.indexOf('source_row')], '1000');
  // a given endRow is as given: backwards or more than 5,000 rows stays refused
  invalid(t, await sample({ type: 'trimmed', startRow: 300, endRow: 200 }), 'endRow');
  invalid(t, await sample({ type: 'trimmed', startRow: 300, endRow: 5301 }), 'endRow');
  t.equal((await sample({ type: 'trimmed', startRow: 300, endRow: 5300 })).data.endRow, 1000);
  // and the documented default in schemas.json (the document /docs/schemas.json serves)
  const schemas = schemasJson(appRouter) as any;
  t.match(schemas['fileStorage.getSample'].input.properties.endRow, {
    type: 'integer',
    default: 200,
  });
});

t.test(
  'downloadStatementFile: originalExcelFile names the workbook download, and only that one',
  async (t) => {
    const download = (input: Record<string, unknown>) =>
      owner.client.mutateUnchecked('fileStorage.downloadStatementFile', {
        organizationId: org,
        ...input,
      });
    const plain = await download({
      type: 'original-excel',
      file: workbook.statementId,
    });
    t.equal(plain.data.fileName, 'bmi-royalty-statement.xlsx');
    const named = await download({
      type: 'original-excel',
      file: workbook.statementId,
      originalExcelFile: ' BMI Q1 2024.xlsx ',
    });
    t.equal(named.data.fileName, 'BMI Q1 2024.xlsx');
    const res = await fetch(named.data.url);
    t.equal(res.status, 200);
    t.match(res.headers.get('content-disposition'), /^attachment; filename="BMI Q1 2024\.xlsx"/);
    t.same(
      Buffer.from(await res.arrayBuffer()),
      await readFile(path.join(repoRoot, 'fixtures', 'statements', 'bmi-royalty-statement.xlsx')),
      'the workbook as uploaded',
    );
    // the same name twice is one name; empty is as absent
    t.equal(
      (
        await download({
          type: 'original-excel',
          file: workbook.statementId,
          fileName: 'a.xlsx',
          originalExcelFile: 'a.xlsx',
        })
      ).data.fileName,
      'a.xlsx',
    );
    t.equal(
      (
        await download({
          type: 'original',
          file: big.statementId,
          originalExcelFile: '',
        })
      ).data.fileName,
      'thousand.csv',
    );
    // before, these were accepted and the name silently ignored
    invalid(
      t,
      await download({
        type: 'original',
        file: big.statementId,
        originalExcelFile: 'x.xlsx',
      }),
      'originalExcelFile',
    );
    invalid(
      t,
      await download({
        type: 'original-excel',
        file: workbook.statementId,
        fileName: 'a.xlsx',
        originalExcelFile: 'b.xlsx',
      }),
      'originalExcelFile',
    );
    invalid(
      t,
      await download({
        type: 'original-excel',
        file: workbook.statementId,
        originalExcelFile: 'x'.repeat(256),
      }),
      'originalExcelFile',
    );
    // a CSV upload has no workbook
    isError(
      t,
      await download({
        type: 'original-excel',
        file: big.statementId,
        originalExcelFile: 'x.xlsx',
      }),
      'NOT_FOUND',
      'FILE_VARIANT_NOT_FOUND',
    );
  },
);

t.test(
  'original-excel of a workbook in a zip or gzip is the workbook, under its own name',
  async (t) => {
    const bytes = await readFile(
      path.join(repoRoot, 'fixtures', 'statements', 'bmi-royalty-statement.xlsx'),
    );
    const zipped = await zipOf([
      { name: 'Q1 2024/BMI Statement Q1 ü.xlsx', data: bytes },
      { name: 'readme.txt', data: Buffer.from('statements of Q1\n') },
    ]);
    const inZip = await putFile(owner.client, org, artist, 'bmi-statements.zip', zipped);
    const inGzip = await putFile(owner.client, org, artist, 'bmi-q1.xlsx.gz', gzipSync(bytes));
    for (const [up, name] of [
      [inZip, 'BMI Statement Q1 ü.xlsx'],
      [inGzip, 'bmi-q1.xlsx'],
    ] as const) {
      const s = await waitForStatement(owner.client, org, up.statementId);
      t.equal(s.status, 'processed');
      t.ok(s.variants.includes('original-excel'));
      const res = await owner.client.mutate('fileStorage.downloadStatementFile', {
        organizationId: org,
        type: 'original-excel',
        file: up.statementId,
      });
      t.equal(res.data.fileName, name, "the workbook's own name, without the archive's folders");
      const got = await fetch(res.data.url);
      t.same(Buffer.from(await got.arrayBuffer()), bytes, 'the workbook, not the archive');
      // the original stays the upload
      const original = await owner.client.mutate('fileStorage.downloadStatementFile', {
        organizationId: org,
        type: 'original',
        file: up.statementId,
      });
      t.same(
        Buffer.from(await (await fetch(original.data.url)).arrayBuffer()),
        up === inZip ? zipped : gzipSync(bytes),
      );
    }
    // reprocessed: a new version of the unpacked workbook, the old one gone
    const keyOf = async () =>
      (
        await srv.deps.pool.query(
          `SELECT variants->>'original-excel' AS k FROM statements WHERE id = $1`,
          [inZip.statementId],
        )
      ).rows[0].k as string;
    const { after, gone } = await reprocessed(t, inZip.statementId, keyOf);
    t.ok(gone, "the earlier version's workbook is removed");
    t.ok(await srv.deps.store.head(after));
  },
);

/** The object key a statement's record gives a variant. */
const variantKey = async (statementId: string, variant: string) =>
  (
    await srv.deps.pool.query(`SELECT variants->>$2 AS k FROM statements WHERE id = $1`, [
      statementId,
      variant,
    ])
  ).rows[0].k as string;
const bytesOf = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());
const downloadVariant = async (type: 'original' | 'single' | 'removed', file: string) =>
  (
    await owner.client.mutate('fileStorage.downloadStatementFile', {
      organizationId: org,
      type,
      file,
    })
  ).data;

const bomText = `${HEADER.join(',')}\n2024-03,Rivière,EUR,2,0.50\n2024-03,Ciel de Nuit,EUR,1,0.25\n`;
const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(bomText)]);

t.test(
  "a decoded text upload's single copy: recorded by its run, written on first request, the same bytes",
  async (t) => {
    const download = await putFile(owner.client, org, artist, 'bom.csv', bom);
    const sampled = await putFile(owner.client, org, artist, 'bom-sampled.csv', bom);
    for (const up of [download, sampled]) {
      const s = await waitForStatement(owner.client, org, up.statementId);
      t.equal(s.status, 'processed');
      t.same(s.variants, ['normalized', 'original', 'removed', 'single'], 'single is listed');
      t.equal(await srv.deps.store.head(await variantKey(up.statementId, 'single')), undefined);
    }
    // a download writes it: the text without its BOM
    const link = await downloadVariant('single', download.statementId);
    t.equal(link.fileName, 'bom.single.csv');
    t.same(await bytesOf(link.url), Buffer.from(bomText));
    const original = await downloadVariant('original', download.statementId);
    t.same(await bytesOf(original.url), bom, 'the original stays the upload');
    // a sample of the original reads it through the single copy, written then
    const rows = await owner.client.query('fileStorage.getSample', {
      organizationId: org,
      type: 'original',
      file: sampled.statementId,
    });
    t.same(rows.data.rows, [
      HEADER,
      ['2024-03', 'Rivière', 'EUR', '2', '0.50'],
      ['2024-03', 'Ciel de Nuit', 'EUR', '1', '0.25'],
    ]);
    t.same(
      await srv.deps.store.getBuffer(await variantKey(sampled.statementId, 'single')),
      Buffer.from(bomText),
    );
    // reprocessed: the written copy goes with its version, the next one waits for its request
    const { after, gone } = await reprocessed(t, download.statementId, () =>
      variantKey(download.statementId, 'single'),
    );
    t.ok(gone, "the earlier version's single copy is removed");
    t.equal(await srv.deps.store.head(after), undefined);
    t.same(
      await bytesOf((await downloadVariant('single', download.statementId)).url),
      Buffer.from(bomText),
    );
    // while it is processed again, its recorded copy is there to download, as it was
    const busy = await putFile(owner.client, org, artist, 'bom-busy.csv', bom);
    await waitForStatement(owner.client, org, busy.statementId);
    await srv.deps.pool.query(`UPDATE statements SET status = 'processing' WHERE id = $1`, [
      busy.statementId,
    ]);
    t.same(
      await bytesOf((await downloadVariant('single', busy.statementId)).url),
      Buffer.from(bomText),
    );
    t.same(
      await bytesOf((await downloadVariant('removed', busy.statementId)).url),
      Buffer.from('record,reason,c0,c1,c2,c3,c4\n'),
    );
    await srv.deps.pool.query(`UPDATE statements SET status = 'processed' WHERE id = $1`, [
      busy.statementId,
    ]);
  },
);

t.test(
  'a removed-rows file with nothing in it is written on first request, the same bytes',
  async (t) => {
    const empty = await putFile(owner.client, org, artist, 'nothing-removed.csv', bom);
    const sampled = await putFile(owner.client, org, artist, 'nothing-removed-2.csv', bom);
    // a repeated header and a title above the header: written by the run, as before
    const repeated = await putFile(
      owner.client,
      org,
      artist,
      'repeated-header.csv',
      Buffer.from(bomText.replace('\n2024-03,Ciel', `\n${HEADER.join(',')}\n2024-03,Ciel`)),
    );
    const titled = await putFile(
      owner.client,
      org,
      artist,
      'titled.csv',
      Buffer.from(`Royalty statement March 2024\n${bomText}`),
    );
    for (const up of [empty, sampled, repeated, titled]) {
      const s = await waitForStatement(owner.client, org, up.statementId);
      t.equal(s.status, 'processed');
      t.ok(s.variants.includes('removed'), 'removed is listed');
    }
    const stored = async (statementId: string) =>
      srv.deps.store.head(await variantKey(statementId, 'removed'));
    t.equal(await stored(empty.statementId), undefined, 'nothing removed: not written yet');
    t.equal(await stored(sampled.statementId), undefined);
    t.match(await stored(repeated.statementId), { contentType: 'text/csv' }, 'a header: written');
    t.match(await stored(titled.statementId), { contentType: 'text/csv' }, 'a title: written');
    t.same(
      await bytesOf((await downloadVariant('removed', empty.statementId)).url),
      Buffer.from('record,reason,c0,c1,c2,c3,c4\n'),
    );
    t.match(await stored(empty.statementId), {
      size: 29,
      contentType: 'text/csv',
    });
    const sample = await owner.client.query('fileStorage.getSample', {
      organizationId: org,
      type: 'removed',
      file: sampled.statementId,
    });
    t.same(sample.data.columns, ['record', 'reason', 'c0', 'c1', 'c2', 'c3', 'c4']);
    t.same(sample.data.rows, []);
    t.match(await stored(sampled.statementId), { size: 29 });
    t.same(
      (await bytesOf((await downloadVariant('removed', repeated.statementId)).url)).toString(),
      'record,reason,c0,c1,c2,c3,c4\n2,repeated_header,Period,Title,Currency,Units,Net\n',
    );
    t.same(
      (await bytesOf((await downloadVariant('removed', titled.statementId)).url)).toString(),
      'record,reason,c0,c1,c2,c3,c4\n,preamble,Royalty statement March 2024,,,,\n',
    );
  },
);

/** A zip of these files (yazl), as a buffer. */
async function zipOf(files: { name: string; data: Buffer }[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const f of files) zip.addBuffer(f.data, f.name);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
