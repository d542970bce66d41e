// Every fixture statement through the real HTTP API (presigned PUT included), the job runner,
// worker threads, DuckDB and the object store: the results its expected file states, to the cent.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import t from 'tap';
import { createRightsholder, uploadFixture, waitForStatement } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { repoRoot } from '../setup/paths.ts';
import { canonicalDecimal } from '../helpers/decimal.ts';

const dir = path.join(repoRoot, 'fixtures', 'statements');
const expectations = readdirSync(dir)
  .filter((f) => f.endsWith('.expected.json'))
  .sort()
  .map(
    (f) =>
      JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as {
        file: string;
        source: string;
        dataRecords: number;
        footerRecords: number;
        netEarningsSum: string;
        netEarningsSumByCurrency?: Record<string, string>;
        unitsSum: string | null;
        /** the statement's period: YYYY-MM, or YYYYQn for a quarter */
        period: string;
        format: string;
        headerLine: number;
        sheet?: string;
        archiveEntry?: string;
        preambleValues?: Record<string, string>;
      },
  );

const srv = await startTestServer(t, { role: 'serve' });
const owner = await newOrganization(srv, 'Fixture Label');
const org = owner.organizationId;
const rightsholderId = await createRightsholder(owner.client, org, 'Fixture Artist');
const work = await mkdtemp(path.join(tmpdir(), 'royalty-fixtures-'));
const duck = await (await DuckDBInstance.create(':memory:')).connect();

t.ok(expectations.length >= 15, `at least 15 fixture statements (${expectations.length})`);

for (const expected of expectations) {
  t.test(`${expected.file} (${expected.source})`, async (t) => {
    const { statementId } = await uploadFixture(
      owner.client,
      org,
      rightsholderId,
      path.join(dir, expected.file),
    );
    let s = await waitForStatement(owner.client, org, statementId);
    if (s.status === 'needs_mapping') {
      // a layout the shared library does not know: the user accepts the suggested mapping
      t.ok(s.suggestedMapping?.fields, 'waits with a suggested mapping');
      const created = await owner.client.mutate('mapping.create', {
        organizationId: org,
        name: `${expected.source} (accepted suggestion)`,
        headers: s.headers,
        headerHash: s.headerHash,
        fields: s.suggestedMapping.fields,
      });
      t.equal(
        created.ok,
        true,
        `mapping.create ${created.ok ? '' : JSON.stringify(created.error)}`,
      );
      const released = await owner.client.mutate('upload.callback', {
        organizationId: org,
        type: 'mapping_created',
        mapping_id: created.data.id,
        file_id: statementId,
      });
      t.same(released.data?.statementIds, [statementId]);
      s = await waitForStatement(owner.client, org, statementId);
    }
    t.equal(
      s.status,
      'processed',
      `processed ${s.failureReason ? JSON.stringify(s.failureReason) : ''}`,
    );
    if (s.status !== 'processed') return;
    t.equal(s.keptRows, expected.dataRecords, 'every data row kept');
    t.equal(s.keptRows + s.removedRows, s.rowCount, 'kept + removed = rows read');
    const byCurrency = Object.entries(expected.netEarningsSumByCurrency ?? {});
    if (byCurrency.length > 1) {
      // rows in several currencies: no single net, which would add pounds to dollars; each currency's to the last decimal
      t.equal(s.netEarnings, null, 'no net across currencies');
      t.same(
        (s.currencyTotals as { currency: string; net: string }[]).map((c) => [
          c.currency,
          canonicalDecimal(c.net),
        ]),
        byCurrency.map(([c, net]) => [c, canonicalDecimal(net)]),
        'net earnings per currency to the last decimal',
      );
    } else {
      t.equal(
        canonicalDecimal(s.netEarnings ?? '0'),
        canonicalDecimal(expected.netEarningsSum),
        'net earnings to the last decimal',
      );
    }
    if (expected.unitsSum !== null)
      t.equal(canonicalDecimal(s.units ?? '0'), canonicalDecimal(expected.unitsSum), 'units');
    t.same(s.progress, {
      done: s.rowCount,
      total: s.rowCount,
      stage: null,
      since: null,
      seconds: null,
    });
    // the statement's period: a month as YYYY-MM, a quarter as YYYYQn (a quarter's report by month is that quarter)
    const period =
      s.stmtCadence === 'M'
        ? `${s.stmtYear}-${String(s.stmtPeriod).padStart(2, '0')}`
        : `${s.stmtYear}${s.stmtCadence}${s.stmtPeriod}`;
    t.equal(period, expected.period, 'statement period');
    // how the file was read, on the record
    t.match(
      s.layout,
      {
        format: expected.format,
        headerLine: expected.headerLine,
        sheet: expected.sheet ?? null,
        archiveEntry: expected.archiveEntry ?? null,
        archiveEntries: expected.archiveEntry ? [expected.archiveEntry] : [],
      },
      'layout',
    );
    if (expected.preambleValues)
      t.same(s.layout.preambleValues, expected.preambleValues, 'preamble values');
    if (expected.file === 'believe-quarter-by-month.xlsx') {
      // three month sheets read as one; their three Total rows stated as one sum
      t.same(s.layout.sheets, ['January 2024', 'February 2024', 'March 2024']);
      t.same(
        s.layout.statedTotals.map(
          (x: { label: string; kind: string; values: Record<string, string> }) => [
            x.label,
            x.kind,
            canonicalDecimal(x.values['Net Revenue']!),
            canonicalDecimal(x.values.Quantity!),
          ],
        ),
        [
          [
            'Total',
            'total',
            canonicalDecimal(expected.netEarningsSum),
            canonicalDecimal(expected.unitsSum!),
          ],
        ],
      );
      const kinds = s.flags.map((f: { kind: string }) => f.kind);
      t.ok(kinds.includes('sheets_combined'), 'flagged as sheets read as one');
      t.notOk(kinds.includes('footer_total_mismatch'), 'the summed totals agree with the rows');
      t.notOk(kinds.includes('other_tables_not_read'), 'the summary sheet is no table left out');
    }

    // the normalized Parquet through its presigned URL: the same rows and sum, each with its source row
    const link = await owner.client.mutate('fileStorage.downloadStatementFile', {
      organizationId: org,
      type: 'normalized',
      file: statementId,
    });
    t.equal(link.ok, true);
    if (!link.ok) return;
    const res = await fetch(link.data.url);
    t.equal(res.status, 200);
    t.match(res.headers.get('content-disposition') ?? '', /^attachment; filename=/);
    const bytes = Buffer.from(await res.arrayBuffer());
    const file = path.join(work, `${statementId}.parquet`);
    await writeFile(file, bytes);
    const check = await duck.runAndReadAll(
      `SELECT count(*), coalesce(sum(royalty_earnings), 0)::VARCHAR, min(source_row), max(source_row), count(DISTINCT source_row) FROM read_parquet('${file}')`,
    );
    const [count, sum, minRow, maxRow, distinctRows] = check.getRows()[0]!;
    t.equal(Number(count), expected.dataRecords);
    t.equal(canonicalDecimal(String(sum)), canonicalDecimal(expected.netEarningsSum));
    if (expected.dataRecords > 0) {
      t.same(
        [Number(minRow), Number(maxRow), Number(distinctRows)],
        [1, expected.dataRecords, expected.dataRecords],
        'source rows 1..n',
      );
    }

    // every row that is not data is in the removed variant, with its reason
    const removed = await owner.client.query('fileStorage.getSample', {
      organizationId: org,
      type: 'removed',
      file: statementId,
      endRow: 5000,
    });
    t.equal(removed.ok, true);
    const reasons: string[] = removed.data.rows.map((r: unknown[]) =>
      String(r[removed.data.columns.indexOf('reason')]),
    );
    t.equal(reasons.filter((r) => r === 'footer').length, expected.footerRecords, 'footer rows');
    if (expected.file.startsWith('soundcloud'))
      t.same(reasons, ['preamble', 'preamble'], 'the two preamble rows above the header');

    // reprocessing is deterministic: byte-identical normalized rows
    const again = await owner.client.mutate('upload.uploadAction', {
      organizationId: org,
      action: { type: 'reprocess', statementId },
    });
    t.equal(again.ok, true);
    const s2 = await waitForStatement(owner.client, org, statementId);
    t.equal(s2.status, 'processed');
    const link2 = await owner.client.mutate('fileStorage.downloadStatementFile', {
      organizationId: org,
      type: 'normalized',
      file: statementId,
    });
    if (!link2.ok) return;
    const bytes2 = Buffer.from(await (await fetch(link2.data.url)).arrayBuffer());
    t.equal(
      createHash('sha256').update(bytes2).digest('hex'),
      createHash('sha256').update(bytes).digest('hex'),
      'byte-identical after reprocessing',
    );
  });
}
