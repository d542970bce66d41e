// The rows of each export type, as parts to write: each part a SELECT (with its parameters) whose
// columns are the type's columns by name, and its row count. royalty_lines reads ranges of the
// facts' sort key; earnings_summary, statements and catalog are materialized in a table of the
// attempt's DuckDB connection first (statements and catalog staged from PostgreSQL) and cut into
// ranges of its row number.
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from '../db/sql.ts';
import type { Restrictions } from '../analytics/compile.ts';
import { semantic } from '../analytics/semantic.ts';
import type { Deps } from '../deps.ts';
import {
  effectiveValues,
  overrideFields,
  type FetchedResult,
  type OverrideRow,
} from '../catalog/musicalDetails.ts';
import {
  ParamAllocator,
  catalogColumns,
  columnsOf,
  factsPredicate,
  joinClauses,
  monthIndex,
  royaltyLineColumns,
  summaryGroupColumns,
  summaryMeasureColumns,
  type ExportColumn,
} from './definitions.ts';
import {
  catalogDetailsPage,
  INVENTORY_COLUMNS,
  statementInventory,
  type ExportRow,
} from './store.ts';
import type { PartSource } from './writers.ts';
import { periodIdSql } from '../periods.ts';

const FACTS = semantic.model.facts.table;

/** What the database holds that an export reads: a change while an export runs makes it start over. */
export async function dataVersion(c: DuckDBConnection): Promise<string> {
  const rows = (
    await c.runAndReadAll(`SELECT
      (SELECT md5(coalesce(string_agg(statement_id || ':' || normalized_version, ',' ORDER BY statement_id), '')) FROM loaded),
      (SELECT md5(coalesce(string_agg(statement_id || currency || CAST(rate AS VARCHAR), ',' ORDER BY statement_id, currency), '')) FROM fx),
      (SELECT md5(coalesce(string_agg(id || name, ',' ORDER BY id), '')) FROM rightsholder),
      (SELECT md5(coalesce(string_agg(id || name, ',' ORDER BY id), '')) FROM distributor)`)
  ).getRows()[0]!;
  return rows.join('|');
}

const SORT_KEY = ['f.rightsholder_id', 'f.statement_id', 'f.source_row'];

/** royalty_lines: parts are ranges of the facts' sort key, planned from per-statement counts. */
async function royaltyLineParts(
  c: DuckDBConnection,
  e: ExportRow,
  r: Restrictions,
): Promise<PartSource[]> {
  const chunk = e.part_rows;
  const p = new ParamAllocator();
  const pred = factsPredicate(r, e.filters, p);
  const counts = (
    await c.runAndReadAll(
      `SELECT f.rightsholder_id, f.statement_id, (f.source_row - 1) // ${chunk} AS chunk, count(*) AS n
       FROM ${FACTS} f ${joinClauses(pred.joins)} WHERE ${pred.where} GROUP BY ALL ORDER BY 1, 2, 3`,
      p.params,
    )
  ).getRows();
  // consecutive chunks are packed into parts of at most part_rows rows; a part starts at a chunk's first row
  const plans: { start: [string, string, number]; rows: number }[] = [];
  for (const [rh, st, ch, n] of counts) {
    const rows = Number(n);
    const last = plans[plans.length - 1];
    if (last && last.rows + rows <= e.part_rows) last.rows += rows;
    else plans.push({ start: [String(rh), String(st), Number(ch) * chunk + 1], rows });
  }
  if (plans.length === 0) plans.push({ start: ['', '', 0], rows: 0 });
  const columns = royaltyLineColumns;
  const joins = joinClauses(pred.joins, ...columns.map((col) => col.joins));
  return plans.map((plan, i) => {
    const q = new ParamAllocator();
    const where = [factsPredicate(r, e.filters, q).where];
    // lexicographic bounds on the sort key, written out (DuckDB cannot range-compare row values)
    const bound = (k: [string, string, number], op: '>' | '<') => {
      const [rh, st, row] = [q.add(k[0]), q.add(k[1]), q.add(String(k[2]))];
      const [a, b, c] = SORT_KEY;
      return `(${a} ${op} ${rh} OR (${a} = ${rh} AND (${b} ${op} ${st} OR (${b} = ${st} AND ${c} ${op}${op === '>' ? '=' : ''} CAST(${row} AS BIGINT)))))`;
    };
    if (i > 0) where.push(bound(plan.start, '>'));
    const next = plans[i + 1];
    if (next) where.push(bound(next.start, '<'));
    return {
      sql: `SELECT ${columns.map((col) => `${col.sql} AS ${quoteIdent(col.name)}`).join(', ')}
        FROM ${FACTS} f ${joins} WHERE ${where.join(' AND ')}`,
      params: q.params,
      rows: plan.rows,
    };
  });
}

/** Parts of a table materialized with a row number (export_rn): ranges of it. */
async function materializedParts(
  c: DuckDBConnection,
  table: string,
  columns: ExportColumn[],
  partRows: number,
): Promise<PartSource[]> {
  const total = Number((await c.runAndReadAll(`SELECT count(*) FROM ${table}`)).getRows()[0]![0]);
  const parts: PartSource[] = [];
  for (let from = 0; from < total || parts.length === 0; from += partRows) {
    parts.push({
      sql: `SELECT ${columns.map((col) => quoteIdent(col.name)).join(', ')} FROM ${table} WHERE export_rn > CAST($1 AS BIGINT) AND export_rn <= CAST($2 AS BIGINT) ORDER BY export_rn`,
      params: [String(from), String(from + partRows)],
      rows: Math.max(0, Math.min(partRows, total - from)),
    });
  }
  return parts;
}

/** earnings_summary: the model's measures grouped by rightsholder, period, distributor, source, territory and currency. */
async function summaryParts(
  c: DuckDBConnection,
  e: ExportRow,
  r: Restrictions,
  table: string,
): Promise<PartSource[]> {
  const p = new ParamAllocator();
  const pred = factsPredicate(r, e.filters, p);
  const all = [...summaryGroupColumns, ...summaryMeasureColumns];
  const joins = joinClauses(pred.joins, ...all.map((col) => col.joins));
  const order = [
    'rightsholder_name',
    'rightsholder_id',
    'stmt_period_full',
    'distributor_name',
    'distributor_id',
    'source',
    'territory',
    'currency',
  ];
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${table} AS
     SELECT row_number() OVER (ORDER BY ${order.map((o) => `${quoteIdent(o)} ASC NULLS LAST`).join(', ')}) AS export_rn, g.*
     FROM (SELECT ${all.map((col) => `${col.sql} AS ${quoteIdent(col.name)}`).join(', ')}
           FROM ${FACTS} f ${joins} WHERE ${pred.where}
           GROUP BY ${summaryGroupColumns.map((_, i) => i + 1).join(', ')}) g`,
    p.params,
  );
  return materializedParts(c, table, columnsOf('earnings_summary'), e.part_rows);
}

/** statements: the inventory from PostgreSQL, joined in DuckDB with the analytics figures of each statement. */
async function statementParts(
  deps: Deps,
  c: DuckDBConnection,
  e: ExportRow,
  r: Restrictions,
  table: string,
): Promise<PartSource[]> {
  const f = e.filters;
  const rows = await statementInventory(deps.pool, e.organization_id, r.rightsholderIds, {
    fromMonth: f.statementPeriod?.from ? monthIndex(f.statementPeriod.from) : null,
    toMonth: f.statementPeriod?.to ? monthIndex(f.statementPeriod.to) : null,
    distributorIds: f.distributorIds ?? null,
    statementIds: f.statementIds ?? null,
  });
  const stage = `${table}_stage`;
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${stage} (${INVENTORY_COLUMNS.map((s) => `${s} VARCHAR`).join(', ')})`,
  );
  const appender = await c.createAppender(stage, 'main', 'temp');
  for (const row of rows) {
    for (const name of INVENTORY_COLUMNS) {
      const v = row[name];
      if (v === null) appender.appendNull();
      else appender.appendVarchar(v);
    }
    appender.endRow();
  }
  appender.closeSync();
  const p = new ParamAllocator();
  const scope = factsPredicate(r, {}, p).where;
  const usd = semantic.measures.get('royalty_earnings_usd')!;
  const dec = (expr: string) => `CAST(${expr} AS DECIMAL(38,12))`;
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${table} AS
     SELECT row_number() OVER (ORDER BY i.rightsholder_name, i.rightsholder_id, i.stmt_year NULLS LAST, i.stmt_period NULLS LAST, i.file_name, i.statement_id) AS export_rn,
       i.statement_id, i.file_name, i.custom_name, i.rightsholder_id, i.rightsholder_name, i.distributor_id, i.distributor_name, i.status,
       i.failure_code, i.failure_reason, CAST(i.stmt_year AS INTEGER) AS stmt_year, CAST(i.stmt_period AS INTEGER) AS stmt_period, i.stmt_cadence,
       ${periodIdSql({ year: 'i.stmt_year', period: 'i.stmt_period', cadence: 'i.stmt_cadence' })} AS stmt_period_full,
       i.currency, CAST(i.sales_period_start AS DATE) AS sales_period_start, CAST(i.sales_period_end AS DATE) AS sales_period_end,
       CAST(i.file_rows AS BIGINT) AS file_rows, CAST(i.kept_rows AS BIGINT) AS kept_rows, CAST(i.removed_rows AS BIGINT) AS removed_rows,
       ${dec('i.net')} AS statement_royalty_earnings, ${dec('i.gross')} AS statement_gross_royalty_earnings, ${dec('i.units')} AS statement_units,
       a.analytics_rows, a.analytics_royalty_earnings, a.analytics_gross_royalty_earnings, a.analytics_units, a.analytics_royalty_earnings_usd,
       ${dec('i.net')} - a.analytics_royalty_earnings AS royalty_earnings_difference,
       i.open_flags, CAST(i.open_flag_count AS BIGINT) AS open_flag_count, CAST(i.resolved_flag_count AS BIGINT) AS resolved_flag_count,
       i.uploaded_at, i.processed_at
     FROM ${stage} i
     LEFT JOIN (
       SELECT f.statement_id, count(*) AS analytics_rows, sum(f.royalty_earnings) AS analytics_royalty_earnings,
         sum(f.gross_royalty_earnings) AS analytics_gross_royalty_earnings, sum(f.units) AS analytics_units, ${usd.sql} AS analytics_royalty_earnings_usd
       FROM ${FACTS} f ${joinClauses(usd.joins)}
       WHERE ${scope} AND f.statement_id IN (SELECT statement_id FROM ${stage})
       GROUP BY f.statement_id
     ) a ON a.statement_id = i.statement_id`,
    p.params,
  );
  return materializedParts(c, table, columnsOf('statements'), e.part_rows);
}

const CATALOG_STAGE = catalogColumns.map((c) => c.name);
const CATALOG_PAGE = 5_000;

const listText = (values: unknown): string | null => {
  if (!Array.isArray(values) || values.length === 0) return null;
  return values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('; ');
};

/** A musical detail's row of the catalog stage: its values as text, with its effective values (the catalog's rule). */
function catalogStageValues(row: Record<string, unknown>): Record<string, string | null> {
  const result = (row.result ?? null) as FetchedResult | null;
  const overrides = row.overrides as OverrideRow[];
  const eff = effectiveValues(
    { title: String(row.title), artist: (row.artist as string | null) ?? null, result },
    overrides,
  );
  // the catalog's own overriddenFields: the corrected fields, in their order (an ignore is no field)
  const fields = overrideFields.filter((f) => overrides.some((o) => o.values?.[f] !== undefined));
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  const values: Record<string, string | null> = {
    rightsholder_id: text(row.rightsholder_id),
    rightsholder_name: text(row.rightsholder_name),
    block_id: text(row.block_id),
    musical_detail_id: text(row.musical_detail_id),
    identity_key: text(row.identity_key),
    isrc: text(row.isrc),
    raw_title: text(row.title),
    raw_artist: text(row.artist),
    raw_release_title: text(row.release_title),
    raw_release_artist: text(row.release_artist),
    variant_count: text(row.variant_count),
    row_count: text(row.row_count),
    earnings_usd: text(row.earnings_usd),
    rows_without_rate: text(row.rows_without_rate),
    cluster_title: text(row.cluster_title),
    enrichment_state: text(row.state),
    ignored: text(row.ignored),
    provider: text(row.provider),
    provider_id: text(row.provider_id),
    fetched_title: text(result?.title),
    fetched_artist: text(result?.artist),
    fetched_isrc: text(result?.isrc),
    fetched_release_title: text(result?.releaseTitle),
    fetched_release_date: text(result?.releaseDate),
    fetched_genres: listText(result?.genres),
    fetched_confidence:
      typeof result?.confidence === 'number' && Number.isFinite(result.confidence)
        ? String(result.confidence)
        : null,
    fetched_at: text(row.fetched_at),
    title: text(eff.title),
    artist: text(eff.artist),
    release_date: text(eff.releaseDate),
    genres: listText(eff.genres),
    albums: listText(eff.albums),
    song_writers: listText(eff.songWriters),
    override_count: String(overrides.length),
    overridden_fields: fields.length ? fields.join('; ') : null,
    last_override_at: overrides.length ? overrides[overrides.length - 1]!.createdAt : null,
    track_product_id: text(row.track_id),
    track_link_source: text(row.link_source),
    track_title: text(row.track_title),
    track_artist: text(row.track_artist),
    track_isrc: text(row.track_isrc),
    track_release_date: text(row.track_release_date),
    track_genres: listText(row.track_genres),
    album_product_id: text(row.album_id),
    album_title: text(row.album_title),
    album_artist: text(row.album_artist),
    album_upc: text(row.album_upc),
    album_release_date: text(row.album_release_date),
  };
  return values;
}

/**
 * catalog: the musical details of the rightsholders' blocks, read from PostgreSQL a page at a time,
 * with their effective values (src/catalog/musicalDetails.ts, the same rule the catalog applies),
 * their track product and its album; staged in DuckDB and cut into parts like the other tables.
 */
async function catalogParts(
  deps: Deps,
  c: DuckDBConnection,
  e: ExportRow,
  r: Restrictions,
  table: string,
): Promise<PartSource[]> {
  const stage = `${table}_stage`;
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${stage} (${CATALOG_STAGE.map((n) => `${n} VARCHAR`).join(', ')})`,
  );
  const appender = await c.createAppender(stage, 'main', 'temp');
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const rows = await catalogDetailsPage(
      deps.pool,
      e.organization_id,
      r.rightsholderIds,
      after,
      CATALOG_PAGE,
    );

    for (const row of rows) {
      const values = catalogStageValues(row);
      for (const name of CATALOG_STAGE) {
        const v = values[name];
        if (v === null || v === undefined) appender.appendNull();
        else appender.appendVarchar(v);
      }
      appender.endRow();
    }
    if (rows.length < CATALOG_PAGE) break;
    after = String(rows[rows.length - 1]!.musical_detail_id);
  }
  appender.closeSync();
  const cast = (col: ExportColumn) =>
    col.kind === 'date'
      ? `CAST(${col.name} AS DATE) AS ${col.name}`
      : col.kind === 'number'
        ? `CAST(${col.name} AS ${col.name === 'earnings_usd' ? 'DECIMAL(38,26)' : col.name === 'fetched_confidence' ? 'DOUBLE' : 'BIGINT'}) AS ${col.name}`
        : col.name;
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${table} AS
     SELECT row_number() OVER (ORDER BY rightsholder_name, rightsholder_id, CAST(earnings_usd AS DECIMAL(38,26)) DESC, musical_detail_id) AS export_rn,
       ${catalogColumns.map(cast).join(', ')}
     FROM ${stage}`,
  );
  return materializedParts(c, table, catalogColumns, e.part_rows);
}

/** The parts of the export's type; `table`: the name of the attempt's table, for the types materialized. */
export async function partsOf(
  deps: Deps,
  c: DuckDBConnection,
  e: ExportRow,
  r: Restrictions,
  table: string,
): Promise<PartSource[]> {
  switch (e.type) {
    case 'royalty_lines':
      return royaltyLineParts(c, e, r);
    case 'earnings_summary':
      return summaryParts(c, e, r, table);
    case 'statements':
      return statementParts(deps, c, e, r, table);
    default:
      return catalogParts(deps, c, e, r, table);
  }
}
