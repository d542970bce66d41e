// Every fixture statement, ingested through the procedures at the handler (presigned PUT, job
// runner, worker threads; a layout the library does not know through its accepted suggested
// mapping), then asked of cube.query: earnings, units and rows grouped by statement (and by
// currency) equal the expected sums to the last decimal. The tracks of their normalized rows are
// the committed fixtures/catalog/fixture-tracks.json other tests read.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import t from 'tap';
import {
  committedFixtureTracks,
  normalizedTracks,
  type FixtureTrack,
} from '../helpers/fixtureTracks.ts';
import { createRightsholder, uploadFixture, waitForStatement } from '../helpers/ingest.ts';
import { canonicalDecimal } from '../helpers/decimal.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestHandler } from '../helpers/handler.ts';
import type { Outcome } from '../helpers/trpc.ts';
import { repoRoot } from '../setup/paths.ts';
import { m } from './helpers.ts';

t.setTimeout(900_000);

interface Expected {
  file: string;
  source: string;
  dataRecords: number;
  netEarningsSum: string;
  unitsSum: string | null;
  netEarningsSumByCurrency?: Record<string, string>;
}

const dir = path.join(repoRoot, 'fixtures', 'statements');
const expectations = readdirSync(dir)
  .filter((f) => f.endsWith('.expected.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as Expected);

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'Fixture Analytics');
const org = owner.organizationId;
const rightsholderId = await createRightsholder(owner.client, org, 'Fixture Artist');

const statements = new Map<string, string>();
for (const expected of expectations) {
  const { statementId } = await uploadFixture(
    owner.client,
    org,
    rightsholderId,
    path.join(dir, expected.file),
  );
  statements.set(expected.file, statementId);
}
const processed = new Set<string>();
const outcome = new Map<string, string>();
for (const expected of expectations) {
  const statementId = statements.get(expected.file)!;
  let s = await waitForStatement(owner.client, org, statementId, 300_000);
  if (s.status === 'needs_mapping' && s.suggestedMapping?.fields) {
    // a layout the shared library does not know: the user accepts the suggested mapping
    const created = await owner.client.mutate('mapping.create', {
      organizationId: org,
      name: `${expected.source} (accepted suggestion)`,
      headers: s.headers,
      headerHash: s.headerHash,
      fields: s.suggestedMapping.fields,
    });
    if (created.ok) {
      await owner.client.mutate('upload.callback', {
        organizationId: org,
        type: 'mapping_created',
        mapping_id: created.data.id,
        file_id: statementId,
      });
      s = await waitForStatement(owner.client, org, statementId, 300_000);
    }
  }
  if (s.status === 'processed') processed.add(expected.file);
  outcome.set(
    expected.file,
    `${s.status}${s.failureReason ? `: ${JSON.stringify(s.failureReason)}` : ''}`,
  );
}

async function byStatement(dimensions: string[]) {
  const res: Outcome<any> = await owner.client.mutate('cube.query', {
    organizationId: org,
    query: {
      measures: [m('royalty_earnings'), m('units'), m('statement_row_count')],
      dimensions,
      filters: [{ member: m('rightsholder_id'), operator: 'equals', values: [rightsholderId] }],
      limit: 50_000,
    },
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data.data as Record<string, string | null>[];
}

const totals = await byStatement([m('statement_id')]);
const perCurrency = await byStatement([m('statement_id'), m('currency')]);

t.ok(expectations.length >= 15, `at least 15 fixture statements (${expectations.length})`);

for (const expected of expectations) {
  t.test(`${expected.file} (${expected.source})`, async (t) => {
    const statementId = statements.get(expected.file)!;
    t.ok(processed.has(expected.file), `processed (${outcome.get(expected.file)})`);
    if (!processed.has(expected.file)) return;
    const row = totals.find((r) => r[m('statement_id')] === statementId);
    if (expected.dataRecords === 0) {
      t.equal(row, undefined, 'no rows, no group');
      return;
    }
    t.ok(row, 'in the analytics data');
    if (!row) return;
    t.equal(row[m('statement_row_count')], String(expected.dataRecords), 'rows');
    t.equal(
      row[m('royalty_earnings')],
      canonicalDecimal(expected.netEarningsSum),
      'net earnings to the last decimal',
    );
    if (expected.unitsSum !== null)
      t.equal(row[m('units')], canonicalDecimal(expected.unitsSum), 'units');
    for (const [currency, sum] of Object.entries(expected.netEarningsSumByCurrency ?? {})) {
      const c = perCurrency.find(
        (r) => r[m('statement_id')] === statementId && r[m('currency')] === currency,
      );
      t.equal(c?.[m('royalty_earnings')], canonicalDecimal(sum), `net earnings in ${currency}`);
    }
  });
}

t.test('the tracks of the normalized rows are fixtures/catalog/fixture-tracks.json', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'royalty-fixture-tracks-'));
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  t.teardown(async () => {
    duck.closeSync();
    await rm(dir, { recursive: true, force: true });
  });
  const written: FixtureTrack[] = [];
  for (const { file } of expectations) {
    if (!processed.has(file)) continue;
    const { rows } = await srv.deps.pool.query<{ normalized_key: string }>(
      'SELECT normalized_key FROM statements WHERE id = $1',
      [statements.get(file)],
    );
    const parquet = path.join(dir, `${statements.get(file)}.parquet`);
    await writeFile(parquet, await srv.deps.store.getBuffer(rows[0]!.normalized_key));
    written.push(...(await normalizedTracks(duck, file, parquet)));
  }
  t.same(
    written,
    committedFixtureTracks().filter((tr) => processed.has(tr.file)),
    'rerun fixtures/catalog/build-fixture-tracks.ts when a fixture statement changes',
  );
  t.equal(written.length, 500);
});
