// Renders sql/migrations/000006_seed_reference_data.sql from fixtures/reference: migrations are
// plain SQL, and the shipped data must be in every fresh database, so the data files are compiled
// into one migration that reuses the importers' own upsert statements. Regenerate after changing a
// fixture only while 000006 is unreleased; later changes belong in a new migration.
import { parseFxCsv } from '../fx/parse.ts';
import { ECB_UPSERT_SQL } from '../fx/rates.ts';
import { parseHistoryCsv, parseSymbolsCsv, parseTreasuryCsv } from '../market/parse.ts';
import { PRICES_UPSERT_SQL, SYMBOLS_UPSERT_SQL, TREASURY_UPSERT_SQL } from '../market/store.ts';
import {
  readReferenceFile,
  seedGoldData,
  seedPayors,
  seedSalesTypeLookups,
  taxonomy,
} from './fixtures.ts';
import { normalizeLookupKey } from './normalize.ts';

const TAG = '$ref$';

function literal(rows: unknown[]): string {
  const text = JSON.stringify(rows);
  if (text.includes(TAG)) throw new Error(`reference data contains the quoting tag ${TAG}`);
  return `${TAG}${text}${TAG}::jsonb`;
}

function withRows(sql: string, rows: unknown[]): string {
  if (!sql.includes('$1::jsonb')) throw new Error('statement does not read $1::jsonb');
  return `${sql.replace('$1::jsonb', literal(rows))};`;
}

function unique<T>(rows: T[], key: (row: T) => string, what: string): T[] {
  const seen = new Map<string, T>();
  for (const row of rows) {
    const k = key(row);
    if (seen.has(k)) throw new Error(`${what}: two rows have the key "${k}"`);
    seen.set(k, row);
  }
  return rows;
}

/** The vector entries shipped: every raw value of the gold data (names and aliases), with its category. */
export function seedVectorEntries(): { name: string; category: string }[] {
  const entries = new Map<string, { name: string; category: string }>();
  for (const row of seedGoldData()) {
    const category = row.earningsCategory ?? (row.publisherSource ? 'publishing' : 'other');
    entries.set(`${normalizeLookupKey(row.rawValue)}\u0000${category}`, {
      name: row.rawValue,
      category,
    });
  }
  return [...entries.values()];
}

/** The lookup tables' rows from the fixtures, in the short column names the statements read. */
function lookupSeedRows() {
  const taxonomyRows = taxonomy().map((t, i) => ({
    p: t.primarySalesType,
    s: t.secondarySalesType,
    d: t.description,
    o: i + 1,
  }));
  const salesTypes = unique(
    seedSalesTypeLookups().map((l) => ({
      o: l.original,
      k: normalizeLookupKey(l.original),
      c: l.cleansed,
      p: l.primarySalesType,
      s: l.secondarySalesType,
    })),
    (r) => r.k,
    'sales-type-lookups.csv',
  );
  const gold = unique(
    seedGoldData().map((g) => ({
      r: g.rawValue,
      k: normalizeLookupKey(g.rawValue),
      es: g.earningsSource,
      ec: g.earningsCategory,
      pc: g.parentCompany,
      cs: g.collectionSource,
      ps: g.publisherSource,
      n: g.notes,
    })),
    (r) => r.k,
    'source-gold-data.csv',
  );
  const vectors = seedVectorEntries().map((v) => ({
    n: v.name,
    k: normalizeLookupKey(v.name),
    c: v.category,
  }));
  const payors = unique(
    seedPayors().map((p) => ({ k: normalizeLookupKey(p.name), n: p.name, c: p.category })),
    (r) => r.k,
    'payors.csv',
  );
  return { taxonomyRows, salesTypes, gold, vectors, payors };
}

/** The lookup tables' inserts: taxonomy, sales types, gold data (also as source lookups), vectors, payors. */
function lookupSeedStatements(): string[] {
  const { taxonomyRows, salesTypes, gold, vectors, payors } = lookupSeedRows();
  return [
    withRows(
      `INSERT INTO sales_type_taxonomy (primary_sales_type, secondary_sales_type, description, sort_order)
SELECT p, s, d, o FROM jsonb_to_recordset($1::jsonb) AS r(p text, s text, d text, o integer)`,
      taxonomyRows,
    ),
    withRows(
      `INSERT INTO lookup_sales_types (original, original_normalized, cleansed, primary_sales_type, secondary_sales_type, status, reason)
SELECT o, k, c, p, s, 'verified', '{"origin": "shipped"}'::jsonb FROM jsonb_to_recordset($1::jsonb) AS r(o text, k text, c text, p text, s text)`,
      salesTypes,
    ),
    withRows(
      `INSERT INTO source_gold_data (raw_value, raw_value_normalized, earnings_source, earnings_category, parent_company, collection_source, publisher_source, notes)
SELECT r, k, es, ec, pc, cs, ps, to_jsonb(n) FROM jsonb_to_recordset($1::jsonb) AS x(r text, k text, es text, ec text, pc text, cs text, ps text, n text)`,
      gold,
    ),
    `INSERT INTO lookup_sources (original, original_normalized, collection_source, earnings_source, earnings_category, earnings_parent_company, publisher_source, status, reason)
SELECT raw_value, raw_value_normalized, collection_source, earnings_source, earnings_category, parent_company, publisher_source, 'verified',
  '{"origin": "gold data"}'::jsonb
FROM source_gold_data;`,
    withRows(
      `INSERT INTO source_vectors (name, name_normalized, category)
SELECT n, k, c FROM jsonb_to_recordset($1::jsonb) AS r(n text, k text, c text)`,
      vectors,
    ),
    withRows(
      `INSERT INTO payors (name_normalized, name, category) SELECT k, n, c FROM jsonb_to_recordset($1::jsonb) AS r(k text, n text, c text)`,
      payors,
    ),
  ];
}

/** The ECB rate and market data snapshots, through the importers' own upsert statements. */
function fxAndMarketSeedStatements(): string[] {
  const ecb = parseFxCsv(readReferenceFile('ecb-snapshot.csv'), 'ecb').rates.map((r) => ({
    d: r.date,
    c: r.currency,
    v: r.value,
  }));
  return [
    withRows(ECB_UPSERT_SQL, ecb),
    withRows(SYMBOLS_UPSERT_SQL, parseSymbolsCsv(readReferenceFile('market-symbols.csv'))),
    withRows(PRICES_UPSERT_SQL, parseHistoryCsv(readReferenceFile('market-history.csv'))),
    withRows(
      TREASURY_UPSERT_SQL,
      parseTreasuryCsv(readReferenceFile('treasury-par-yield-snapshot.csv')),
    ),
  ];
}

export function renderReferenceSeed(): string {
  return [
    '-- The shipped reference data, rendered by renderReferenceSeed() (src/lookups/seed.ts) from',
    '-- fixtures/reference/*.csv: the sales-type taxonomy and common sales types, source gold data',
    '-- (also as verified source lookups, and its raw values as vector entries embedded on first use), payors, an ECB',
    '-- reference-rate snapshot, and a market data snapshot. Keys are normalizeLookupKey values.',
    '',
    ...[...lookupSeedStatements(), ...fxAndMarketSeedStatements()].flatMap((sql) => [sql, '']),
  ].join('\n');
}
