// The built-in resolver on raw strings held out of the shipped data (test/lookups/heldOut.ts),
// the shipped data present in a fresh database, and query-time resolution for analytics.
import path from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { csvRows } from '../../src/lookups/csv.ts';
import {
  referenceDir,
  seedGoldData,
  seedPayors,
  seedSalesTypeLookups,
  taxonomy,
} from '../../src/lookups/fixtures.ts';
import { normalizeLookupKey } from '../../src/lookups/normalize.ts';
import { resolveSalesTypes, resolveSources } from '../../src/lookups/aiResolution.ts';
import {
  resolveSalesTypeLookups,
  resolveSourceLookups,
  salesTypeLookupTable,
  sourceLookupTable,
} from '../../src/lookups/analyticsLookups.ts';
import { renderReferenceSeed, seedVectorEntries } from '../../src/lookups/seed.ts';
import { migrationsDir } from '../../src/db/migrate.ts';
import { startTestHandler } from '../helpers/handler.ts';
import { heldOutSalesTypes, heldOutSources } from './heldOut.ts';

const srv = await startTestHandler(t);
const db = srv.deps.pool;

t.test('the held-out strings are not literally in the shipped data', async (t) => {
  const cells = new Set<string>();
  for (const file of readdirSync(referenceDir).filter((f) => f.endsWith('.csv'))) {
    for (const row of csvRows(readFileSync(path.join(referenceDir, file), 'utf8')))
      for (const cell of row) cells.add(cell.trim());
  }
  t.ok(heldOutSources.length + heldOutSalesTypes.length >= 100, 'at least 100 strings');
  t.same(
    [...heldOutSources, ...heldOutSalesTypes].map((h) => h.raw).filter((raw) => cells.has(raw)),
    [],
  );
  const { rows } = await db.query(
    `SELECT original FROM lookup_sources UNION SELECT original FROM lookup_sales_types UNION SELECT raw_value FROM source_gold_data`,
  );
  const originals = new Set(rows.map((r) => r.original));
  t.same(
    [...heldOutSources, ...heldOutSalesTypes].map((h) => h.raw).filter((raw) => originals.has(raw)),
    [],
  );
});

t.test('hit rate of the built-in resolver on held-out raw strings', async (t) => {
  // resolution ignores existing lookups for this measure: the shipped gold lookups would make it trivial
  const client = await db.connect();
  await client.query('BEGIN');
  try {
    await client.query('DELETE FROM lookup_sources');
    await client.query('DELETE FROM lookup_sales_types');
    const sources = await resolveSources(
      client,
      srv.config,
      heldOutSources.map((h) => h.raw),
      false,
    );
    const salesTypes = await resolveSalesTypes(
      client,
      srv.config,
      heldOutSalesTypes.map((h) => h.raw),
      false,
    );
    const sourceMisses = heldOutSources.filter(
      (h, i) =>
        !Object.entries(h.expect).every(([k, v]) => (sources[i]!.proposal as any)?.[k] === v),
    );
    const salesTypeMisses = heldOutSalesTypes.filter(
      (h, i) =>
        salesTypes[i]!.proposal?.primarySalesType !== h.expect.primarySalesType ||
        salesTypes[i]!.proposal?.secondarySalesType !== h.expect.secondarySalesType,
    );
    const total = heldOutSources.length + heldOutSalesTypes.length;
    const hits = total - sourceMisses.length - salesTypeMisses.length;
    const byMethod: Record<string, number> = {};
    for (const r of [...sources, ...salesTypes]) byMethod[r.method] = (byMethod[r.method] ?? 0) + 1;
    t.comment(
      `built-in resolver: ${hits}/${total} held-out strings resolved correctly (${((100 * hits) / total).toFixed(1)}%)`,
    );
    t.comment(
      `sources ${heldOutSources.length - sourceMisses.length}/${heldOutSources.length}, sales types ${heldOutSalesTypes.length - salesTypeMisses.length}/${heldOutSalesTypes.length}`,
    );
    t.comment(`by method: ${JSON.stringify(byMethod)}`);
    for (const m of [...sourceMisses, ...salesTypeMisses]) t.comment(`miss: ${m.raw}`);
    t.ok(hits / total > 0.9, 'above 90%');
    t.ok(sources.every((r) => r.confidence >= 0 && r.confidence <= 1 && r.reason.length > 0));
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
});

t.test('strings that name no source stay unresolved', async (t) => {
  const raws = ['Unknown', 'Bank Interest', 'Withholding Tax', 'Various', 'Label Share'];
  const out = await resolveSources(db, srv.config, raws, false);
  t.same(
    out.map((r) => [r.method, r.proposal]),
    raws.map(() => ['none', null]),
  );
});

t.test(
  'a fresh database holds the shipped data, and 000006 is rendered from the fixtures',
  async (t) => {
    t.equal(
      readFileSync(path.join(migrationsDir, '000006_seed_reference_data.sql'), 'utf8'),
      renderReferenceSeed(),
    );
    const tax = await db.query(
      'SELECT primary_sales_type, secondary_sales_type, description FROM sales_type_taxonomy ORDER BY sort_order',
    );
    t.same(
      tax.rows.map((r) => [r.primary_sales_type, r.secondary_sales_type, r.description]),
      taxonomy().map((x) => [x.primarySalesType, x.secondarySalesType, x.description]),
    );
    const st = await db.query(
      `SELECT original, cleansed, primary_sales_type, secondary_sales_type FROM lookup_sales_types WHERE status = 'verified' ORDER BY original`,
    );
    t.same(
      st.rows.map((r) => [r.original, r.cleansed, r.primary_sales_type, r.secondary_sales_type]),
      seedSalesTypeLookups()
        .map((l) => [l.original, l.cleansed, l.primarySalesType, l.secondarySalesType])
        .sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
    );
    const gold = await db.query(
      'SELECT raw_value, earnings_source, earnings_category, parent_company, collection_source, publisher_source FROM source_gold_data',
    );
    t.equal(gold.rowCount, seedGoldData().length);
    const byRaw = new Map(gold.rows.map((r) => [r.raw_value, r]));
    for (const g of seedGoldData()) {
      t.same(byRaw.get(g.rawValue), {
        raw_value: g.rawValue,
        earnings_source: g.earningsSource,
        earnings_category: g.earningsCategory,
        parent_company: g.parentCompany,
        collection_source: g.collectionSource,
        publisher_source: g.publisherSource,
      });
    }
    t.equal((await db.query('SELECT 1 FROM source_vectors')).rowCount, seedVectorEntries().length);
    t.equal((await db.query('SELECT 1 FROM payors')).rowCount, seedPayors().length);
    const fx = await db.query(
      `SELECT count(DISTINCT rate_date)::int AS days, min(rate_date)::text AS first, max(rate_date)::text AS last FROM fx_rates`,
    );
    t.same(fx.rows[0], { days: 11, first: '2024-07-31', last: '2024-09-26' });
    for (const g of seedGoldData()) t.not(normalizeLookupKey(g.rawValue), '', g.rawValue);
  },
);

t.test('query-time resolution for analytics follows lookup changes at once', async (t) => {
  const raws = ['SPOTIFY PREMIUM', 'ASCAP Domestic', 'Kiosk Plays'];
  const before = await resolveSourceLookups(db, raws);
  t.match(before.get('SPOTIFY PREMIUM'), {
    originalNormalized: 'spotify',
    source: 'Spotify',
    earningsSource: 'Spotify',
    earningsCategory: 'streaming',
  });
  t.equal(before.get('ASCAP Domestic'), null);
  await db.query(
    `UPDATE lookup_sources SET earnings_category = 'audio streaming' WHERE original_normalized = 'spotify'`,
  );
  t.match((await resolveSourceLookups(db, raws)).get('SPOTIFY PREMIUM'), {
    earningsCategory: 'audio streaming',
  });
  const st = await resolveSalesTypeLookups(db, ['STREAMS', 'nope']);
  t.match(st.get('STREAMS'), {
    originalNormalized: 'streams',
    primarySalesType: 'Streaming',
    secondarySalesType: 'Interactive Streaming',
  });
  t.equal(st.get('nope'), null);
  t.equal((await sourceLookupTable(db)).length, 180);
  t.equal((await salesTypeLookupTable(db)).length, 52);
});
