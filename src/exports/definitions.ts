// What an export is: its types and formats, the filters it takes, and for each type the columns it
// writes and the SQL that reads them from the organization's analytics database. Columns reuse
// the semantic model's member SQL (src/analytics/model.ts), so a column means exactly what the
// member of the same name means in cube.query, and the sums match to the last decimal.
import { z } from 'zod';
import {
  ParamAllocator,
  scopePredicate,
  sqlTableColumns,
  type Restrictions,
} from '../analytics/compile.ts';
import type { JoinName } from '../analytics/model.ts';
import { dimensionDefs, semantic } from '../analytics/semantic.ts';
import { monthIndex } from '../periods.ts';

export const exportTypes = ['royalty_lines', 'earnings_summary', 'statements', 'catalog'] as const;
export type ExportType = (typeof exportTypes)[number];

export const exportFormats = ['csv', 'xlsx', 'parquet'] as const;
export type ExportFormat = (typeof exportFormats)[number];

export const exportStatuses = ['queued', 'running', 'completed', 'failed', 'expired'] as const;
export type ExportStatus = (typeof exportStatuses)[number];

/** Spreadsheet parts hold fewer rows: a sheet ends at 1,048,576 rows, and the zip entry stays under 4 GB. */
export const XLSX_MAX_PART_ROWS = 250_000;

export function partRowsFor(format: ExportFormat, configured: number): number {
  return format === 'xlsx' ? Math.min(configured, XLSX_MAX_PART_ROWS) : configured;
}

const month = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'must be a month, YYYY-MM');
const ids = (max: number, what: string) =>
  z
    .array(z.uuid().transform((v) => v.toLowerCase()))
    .min(1)
    .max(max)
    .describe(what);

export const exportFiltersSchema = z
  .object({
    statementPeriod: z
      .object({ from: month.optional(), to: month.optional() })
      .strict()
      .refine((p) => !p.from || !p.to || p.from <= p.to, { message: 'from must not be after to' })
      .optional()
      .describe(
        "statements whose period ends in a month from..to, inclusive (YYYY-MM; the period's last calendar month, like stmt_period_month)",
      ),
    distributorIds: ids(1_000, "only these distributors' statements").optional(),
    statementIds: ids(10_000, 'only these statements').optional(),
    sources: z
      .array(
        z
          .string()
          .trim()
          .min(1)
          .max(200)
          // a lone surrogate cannot be stored (the filters are kept as JSON) nor match any source
          .refine((v) => !/\p{Cs}/u.test(v), 'must be well-formed Unicode (no lone surrogate)'),
      )
      .min(1)
      .max(1_000)
      .optional()
      .describe(
        'only rows of these normalized sources (the source member: collection, else publisher, else earnings source); not for the statements type',
      ),
    territories: z
      .array(
        z
          .string()
          .regex(/^[A-Za-z]{2}$/, 'must be an ISO 3166-1 alpha-2 code')
          .transform((v) => v.toUpperCase()),
      )
      .min(1)
      .max(300)
      .optional()
      .describe(
        'only rows of these territories (ISO 3166-1 alpha-2, the territory member); not for the statements type',
      ),
  })
  .strict();
export type ExportFilters = z.infer<typeof exportFiltersSchema>;

export type ColumnKind = 'text' | 'number' | 'date';

export interface ExportColumn {
  name: string;
  kind: ColumnKind;
  /** SQL over the facts (alias f) and the model's joins; for materialized types, the column itself */
  sql: string;
  joins: JoinName[];
}

const tableColumns = new Map(sqlTableColumns.map((c) => [c.name, c]));

/** A column that is a member of the semantic model (a dimension or the row value of a sum). */
function member(name: string): ExportColumn {
  const c = tableColumns.get(name);
  if (!c) throw new Error(`not a member of the model: ${name}`);
  const type = dimensionDefs.get(name)?.type ?? 'number';
  return {
    name,
    kind: type === 'string' ? 'text' : type === 'time' ? 'date' : 'number',
    sql: c.sql,
    joins: c.joins,
  };
}

/** A raw facts column the model does not expose as a member. */
const fact = (name: string, column: string): ExportColumn => ({
  name,
  kind: 'text',
  sql: `f.${column}`,
  joins: [],
});

const measureSql = (name: string) => semantic.measures.get(name)!.sql;
const measureJoins = (name: string) => semantic.measures.get(name)!.joins;

/** royalty_lines: one row per normalized statement row, with its provenance. */
export const royaltyLineColumns: ExportColumn[] = [
  member('statement_id'),
  member('file_name'),
  member('custom_name'),
  member('source_row'),
  member('rightsholder_id'),
  member('rightsholder_name'),
  member('distributor_id'),
  member('distributor_name'),
  member('stmt_year'),
  member('stmt_period'),
  member('stmt_cadence'),
  member('stmt_period_full'),
  member('currency'),
  member('royalty_earnings'),
  member('gross_royalty_earnings'),
  member('units'),
  member('fx_rate'),
  member('royalty_earnings_usd'),
  member('gross_royalty_earnings_usd'),
  member('sales_period_start'),
  member('sales_period_end'),
  member('sales_type_raw'),
  member('sales_subtype_raw'),
  member('primary_sales_type'),
  member('secondary_sales_type'),
  member('source_raw'),
  member('subsource_raw'),
  member('source'),
  member('territory_raw'),
  member('territory'),
  fact('type_of_right', 'type_of_right'),
  member('track_title_raw'),
  member('track_artist_raw'),
  member('release_title_raw'),
  member('release_artist_raw'),
  member('composers_raw'),
  fact('isrc_raw', 'isrc_raw'),
  member('isrc'),
  fact('upc_raw', 'upc_raw'),
  member('upc'),
  member('iswc'),
  member('other_identifier'),
  member('payor'),
  member('account_number'),
  member('account_name'),
  member('legal_vendor'),
  member('royalty_rate'),
  member('tax_deduction'),
  member('territory_deduction'),
  member('other_adjustments'),
];

/** earnings_summary: the grouping columns, then the sums (the model's measures). */
export const summaryGroupColumns: ExportColumn[] = [
  member('rightsholder_id'),
  member('rightsholder_name'),
  member('stmt_period_full'),
  member('distributor_id'),
  member('distributor_name'),
  member('source'),
  member('territory'),
  member('currency'),
];
export const summaryMeasureColumns: ExportColumn[] = [
  {
    name: 'row_count',
    kind: 'number',
    sql: measureSql('statement_row_count'),
    joins: measureJoins('statement_row_count'),
  },
  ...[
    'units',
    'royalty_earnings',
    'gross_royalty_earnings',
    'royalty_earnings_usd',
    'gross_royalty_earnings_usd',
  ].map((name): ExportColumn => ({
    name,
    kind: 'number',
    sql: measureSql(name),
    joins: measureJoins(name),
  })),
];

const col = (name: string, kind: ColumnKind): ExportColumn => ({
  name,
  kind,
  sql: name,
  joins: [],
});

/** statements: the inventory, with the statement's own totals and the analytics figures beside them. */
export const statementColumns: ExportColumn[] = [
  col('statement_id', 'text'),
  col('file_name', 'text'),
  col('custom_name', 'text'),
  col('rightsholder_id', 'text'),
  col('rightsholder_name', 'text'),
  col('distributor_id', 'text'),
  col('distributor_name', 'text'),
  col('status', 'text'),
  col('failure_code', 'text'),
  col('failure_reason', 'text'),
  col('stmt_year', 'number'),
  col('stmt_period', 'number'),
  col('stmt_cadence', 'text'),
  col('stmt_period_full', 'text'),
  col('currency', 'text'),
  col('sales_period_start', 'date'),
  col('sales_period_end', 'date'),
  col('file_rows', 'number'),
  col('kept_rows', 'number'),
  col('removed_rows', 'number'),
  col('statement_royalty_earnings', 'number'),
  col('statement_gross_royalty_earnings', 'number'),
  col('statement_units', 'number'),
  col('analytics_rows', 'number'),
  col('analytics_royalty_earnings', 'number'),
  col('analytics_gross_royalty_earnings', 'number'),
  col('analytics_units', 'number'),
  col('analytics_royalty_earnings_usd', 'number'),
  col('royalty_earnings_difference', 'number'),
  col('open_flags', 'text'),
  col('open_flag_count', 'number'),
  col('resolved_flag_count', 'number'),
  col('uploaded_at', 'text'),
  col('processed_at', 'text'),
];

/** catalog: one row per musical detail (track identity) with its enrichment, corrections and products. */
export const catalogColumns: ExportColumn[] = [
  col('rightsholder_id', 'text'),
  col('rightsholder_name', 'text'),
  col('block_id', 'text'),
  col('musical_detail_id', 'text'),
  col('identity_key', 'text'),
  col('isrc', 'text'),
  col('raw_title', 'text'),
  col('raw_artist', 'text'),
  col('raw_release_title', 'text'),
  col('raw_release_artist', 'text'),
  col('variant_count', 'number'),
  col('row_count', 'number'),
  col('earnings_usd', 'number'),
  col('rows_without_rate', 'number'),
  col('cluster_title', 'text'),
  col('enrichment_state', 'text'),
  col('ignored', 'text'),
  col('provider', 'text'),
  col('provider_id', 'text'),
  col('fetched_title', 'text'),
  col('fetched_artist', 'text'),
  col('fetched_isrc', 'text'),
  col('fetched_release_title', 'text'),
  col('fetched_release_date', 'text'),
  col('fetched_genres', 'text'),
  col('fetched_confidence', 'number'),
  col('fetched_at', 'text'),
  col('title', 'text'),
  col('artist', 'text'),
  col('release_date', 'text'),
  col('genres', 'text'),
  col('albums', 'text'),
  col('song_writers', 'text'),
  col('override_count', 'number'),
  col('overridden_fields', 'text'),
  col('last_override_at', 'text'),
  col('track_product_id', 'text'),
  col('track_link_source', 'text'),
  col('track_title', 'text'),
  col('track_artist', 'text'),
  col('track_isrc', 'text'),
  col('track_release_date', 'date'),
  col('track_genres', 'text'),
  col('album_product_id', 'text'),
  col('album_title', 'text'),
  col('album_artist', 'text'),
  col('album_upc', 'text'),
  col('album_release_date', 'date'),
];

export function columnsOf(type: ExportType): ExportColumn[] {
  if (type === 'royalty_lines') return royaltyLineColumns;
  if (type === 'catalog') return catalogColumns;
  if (type === 'earnings_summary')
    return [...summaryGroupColumns, ...summaryMeasureColumns].map((c) => ({
      ...c,
      sql: c.name,
      joins: [],
    }));
  return statementColumns;
}

// the month index of a YYYY-MM month: the facts' month_index of a period ending then
export { monthIndex };

/** The rows of the facts an export reads: the caller's restrictions, then the export's filters. */
export function factsPredicate(
  r: Restrictions,
  f: ExportFilters,
  p: ParamAllocator,
): { where: string; joins: JoinName[] } {
  const parts = [scopePredicate('f', r, p)];
  const joins: JoinName[] = [];
  const list = (values: readonly string[]) => values.map((v) => p.add(v)).join(', ');
  if (f.statementPeriod?.from)
    parts.push(
      `f.month_index >= CAST(${p.add(String(monthIndex(f.statementPeriod.from)))} AS INTEGER)`,
    );
  if (f.statementPeriod?.to)
    parts.push(
      `f.month_index <= CAST(${p.add(String(monthIndex(f.statementPeriod.to)))} AS INTEGER)`,
    );
  if (f.statementIds) parts.push(`f.statement_id IN (${list(f.statementIds)})`);
  if (f.distributorIds) {
    const d = member('distributor_id');
    parts.push(`${d.sql} IN (${list(f.distributorIds)})`);
    joins.push(...d.joins);
  }
  if (f.sources) {
    const s = member('source');
    parts.push(`${s.sql} IN (${list(f.sources)})`);
    joins.push(...s.joins);
  }
  if (f.territories) parts.push(`${member('territory').sql} IN (${list(f.territories)})`);
  return { where: parts.join(' AND '), joins };
}

/** The model's join clauses for these joins, in the model's order. */
export function joinClauses(...lists: JoinName[][]): string {
  const needed = new Set(lists.flat());
  return semantic.joinOrder
    .filter((j) => needed.has(j))
    .map((j) => semantic.model.joins[j].sql)
    .join('\n');
}

export { ParamAllocator };
