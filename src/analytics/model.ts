// The semantic model of analytics_full_view: one data structure from which the SQL compiler,
// cube.meta, GET /docs/cube-schema.json and the sqlQuery table are all derived. It is checked
// by modelSchema.ts at start and in a test (names, types, references, joins, rollups).
//
// SQL here is trusted text written by us; values never enter it (the compiler binds them as
// parameters). Aliases: `f` is the row source (the facts table, or a rollup when the query can be
// answered from one), the others are the joins below. `{name}` inserts the SQL of another
// dimension or of an expression, so a definition is written once.

import { USD_SCALE } from '../decimal.ts';
import { monthIdSql, monthStartSql, periodIdSql } from '../periods.ts';

export type DimensionType = 'string' | 'number' | 'time';
export type JoinName =
  | 'statement'
  | 'fx'
  | 'rightsholder'
  | 'distributor'
  | 'salesType'
  | 'source'
  | 'latestPeriod'
  | 'catalog';

export interface ViewDef {
  name: string;
  title: string;
  description: string;
}

/** A column of the facts table: the normalized statement rows of ingestion, plus month_index. */
export interface FactColumn {
  name: string;
  sqlType: string;
  description: string;
}

export interface JoinDef {
  alias: string;
  /** the LEFT JOIN clause; {scope:<column>} marks where the caller's restrictions go */
  sql: string;
  requires: JoinName[];
  /** a relation computed per query (a CTE), named after the alias */
  cte?: string;
}

export interface ExpressionDef {
  sql: string;
  joins: JoinName[];
}

export interface DimensionDef {
  name: string;
  title: string;
  description: string;
  type: DimensionType;
  sql: string;
  joins: JoinName[];
}

export interface MeasureDef {
  name: string;
  title: string;
  description: string;
  type: 'number';
  aggType: 'count' | 'countDistinct' | 'sum' | 'avg' | 'number';
  format?: 'currency' | 'percent';
  /** an aggregate expression over the rows of a group */
  sql: string;
  joins: JoinName[];
  /**
   * How the measure reads a rollup row: 'same' when `sql` gives identical results over a rollup
   * (sums of sums, distinct counts of grouped columns), an expression when it differs, null when
   * a rollup cannot answer it.
   */
  rollup: 'same' | { sql: string } | null;
  /** the value of one row, as a column of the sqlQuery table (sums only) */
  rowSql?: string;
}

export interface RollupDef {
  name: string;
  table: string;
  description: string;
  /** facts columns the rollup groups by */
  groupBy: string[];
  /** facts columns summed into a column of the same name */
  sums: string[];
  /** the column holding count(*) */
  countColumn: string;
}

export interface SemanticModel {
  view: ViewDef;
  facts: { table: string; columns: FactColumn[]; sortKey: string[] };
  joins: Record<JoinName, JoinDef>;
  expressions: Record<string, ExpressionDef>;
  dimensions: DimensionDef[];
  measures: MeasureDef[];
  rollups: RollupDef[];
}

// The catalog (docs/catalog.md "The catalog in analytics"): a row's track is its musical detail, found by the row's raw identity
// (ISRC, else normalized title and artist) in its rightsholder's block; its product is the track
// product that musical detail is linked to.
const FROM_CATALOG =
  "From the row's musical detail in its rightsholder's catalog (identity: the ISRC, else the normalized title and artist); the raw value from the statement while the row's track is not in the catalog yet.";
const RELEASE_DATES =
  "Release dates come from the catalog: enrichment results and users' corrections ('YYYY' is read as 1 January, 'YYYY-MM' as the first of the month); NULL when none is known.";

const dec = 'DECIMAL(38,12)';

/**
 * US dollars for an amount. US dollars per unit of the statement currency are held to 18 decimals
 * in two parts (store.ts, table fx): rate, the rate to 14 decimals (DECIMAL(20,14)), and rate_lo,
 * (round(rate, 18) - rate) × 10^14 (DECIMAL(18,4), under 0.5). At 14 decimals alone a rupiah
 * (0.0000628882… USD) kept 10 significant digits, and 10^10 IDR were 628882.055 USD, .06 to the
 * cent, where its rate gives 628882.05496… amount × rate is an exact DECIMAL(38,26) (under 1e12
 * USD a row and a sum: adding the second part checks DuckDB's 38 digits, which a bare sum, held
 * in 128 bits, passed up to 1.7e12), amount × rate_lo an exact DECIMAL(38,16), at most half the amount;
 * the latter is taken to 12 decimals, then × 10^-14 to the 26 of the first. A sum rounds it once,
 * after summing (`exactUsdSum`): the same value however the rows were grouped first (eager
 * aggregation, the rollup), equal to round(sum(amount × round(rate, 18)), 26) in PostgreSQL
 * (catalog/blocks.ts); a row's value (`usdOf`) rounds per row. The error is the rate's rounding
 * at 18 decimals, at most 5e-19 USD a unit of the currency, plus 5e-27 USD. Answers give these
 * exact amounts rounded once more, to 10 decimals (`usdAnswer`).
 */
const LO_UNIT = 'CAST(0.00000000000001 AS DECIMAL(15,14))';
const usdOf = (amount: string) =>
  `(${amount} * fx.rate + CAST(${amount} * fx.rate_lo AS DECIMAL(38,12)) * ${LO_UNIT})`;
const exactUsdSum = (amount: string) =>
  `(sum(${amount} * fx.rate) + CAST(sum(${amount} * fx.rate_lo) AS DECIMAL(38,12)) * ${LO_UNIT})`;

/**
 * An exact US-dollar amount (DECIMAL(38,26)) as answers give it: rounded once to USD_SCALE (10)
 * decimals, half to even, a DECIMAL(38,10) (docs/money.md). DuckDB's round is half away from
 * zero and its round_even answers a DOUBLE for a DECIMAL, so a tie (exactly 5 × 10^-11 beyond
 * the truncation) whose truncation ends in an even digit keeps the truncation, and any other
 * value is round's. decimal.ts's roundHalfEven is the same rule on text (test/analytics/model.test.ts).
 */
export const usdAnswer = (x: string) => {
  const cut = `trunc(${x}, ${USD_SCALE})`;
  const tie = `abs(${x} - ${cut}) = CAST(0.00000000005 AS DECIMAL(38,26)) AND CAST(${cut} * ${10 ** USD_SCALE} AS HUGEINT) % 2 = 0`;
  return `CAST(CASE WHEN ${tie} THEN ${cut} ELSE round(${x}, ${USD_SCALE}) END AS DECIMAL(38,${USD_SCALE}))`;
};

/** The sum of the amount in US dollars, exact, then rounded once (usdAnswer). */
export const usdSum = (amount: string) => usdAnswer(exactUsdSum(amount));

export const model: SemanticModel = {
  view: {
    name: 'analytics_full_view',
    title: 'Analytics Full View',
    description:
      'One row per normalized statement record of a processed, not deleted statement, joined with the current reference data: sales-type and source lookups, the statement exchange rates, rightsholder and distributor names.',
  },
  facts: {
    table: 'facts',
    sortKey: ['rightsholder_id', 'statement_id', 'source_row'],
    columns: [
      // UUID, not text: every query filters on it (the injected restriction), and on a UUID column
      // holding one value DuckDB's statistics decide that filter without reading the rows
      { name: 'organization_id', sqlType: 'UUID', description: 'organization (tenant) of the row' },
      { name: 'statement_id', sqlType: 'VARCHAR', description: 'statement the row came from' },
      { name: 'rightsholder_id', sqlType: 'VARCHAR', description: 'rightsholder of the statement' },
      {
        name: 'source_row',
        sqlType: 'BIGINT',
        description: 'position among the statement data records, 1..n',
      },
      { name: 'stmt_year', sqlType: 'INTEGER', description: 'statement year' },
      { name: 'stmt_period', sqlType: 'INTEGER', description: 'statement period within the year' },
      { name: 'stmt_cadence', sqlType: 'VARCHAR', description: 'M, Q, H or Y' },
      {
        name: 'month_index',
        sqlType: 'INTEGER',
        description: 'year * 12 + (last calendar month of the statement period - 1)',
      },
      { name: 'currency', sqlType: 'VARCHAR', description: 'ISO 4217 code' },
      { name: 'royalty_earnings', sqlType: dec, description: 'net earnings, statement currency' },
      {
        name: 'gross_royalty_earnings',
        sqlType: dec,
        description: 'gross earnings, statement currency',
      },
      { name: 'units', sqlType: dec, description: 'units' },
      { name: 'sales_period_start', sqlType: 'DATE', description: 'first day of sale' },
      { name: 'sales_period_end', sqlType: 'DATE', description: 'last day of sale' },
      { name: 'sales_type', sqlType: 'VARCHAR', description: 'raw sales type' },
      { name: 'sub_sales_type', sqlType: 'VARCHAR', description: 'raw sales subtype' },
      { name: 'source', sqlType: 'VARCHAR', description: 'raw source' },
      { name: 'sub_source', sqlType: 'VARCHAR', description: 'raw subsource' },
      { name: 'country_raw', sqlType: 'VARCHAR', description: 'territory as written' },
      { name: 'country', sqlType: 'VARCHAR', description: 'ISO 3166-1 alpha-2' },
      { name: 'type_of_right', sqlType: 'VARCHAR', description: 'raw type of right' },
      { name: 'account_number', sqlType: 'VARCHAR', description: 'account number' },
      { name: 'account_name', sqlType: 'VARCHAR', description: 'account name' },
      { name: 'legal_vendor', sqlType: 'VARCHAR', description: 'issuer of the statement' },
      { name: 'territory_deduction', sqlType: dec, description: 'territory deduction, percent' },
      { name: 'tax_deduction', sqlType: dec, description: 'tax deduction, percent' },
      { name: 'royalty_rate', sqlType: dec, description: 'royalty rate' },
      {
        name: 'other_adjustments',
        sqlType: 'VARCHAR',
        description: 'other adjustments, as written',
      },
      { name: 'raw_title', sqlType: 'VARCHAR', description: 'track title as written' },
      { name: 'raw_artist', sqlType: 'VARCHAR', description: 'track artist as written' },
      { name: 'raw_release_title', sqlType: 'VARCHAR', description: 'release title as written' },
      { name: 'raw_release_artist', sqlType: 'VARCHAR', description: 'release artist as written' },
      { name: 'composers', sqlType: 'VARCHAR', description: 'composers as written' },
      { name: 'isrc_raw', sqlType: 'VARCHAR', description: 'ISRC as written' },
      { name: 'isrc', sqlType: 'VARCHAR', description: 'valid ISRC' },
      { name: 'upc_raw', sqlType: 'VARCHAR', description: 'UPC as written' },
      { name: 'upc', sqlType: 'VARCHAR', description: 'valid UPC' },
      { name: 'iswc', sqlType: 'VARCHAR', description: 'valid ISWC' },
      { name: 'other_identifier', sqlType: 'VARCHAR', description: 'other identifier' },
      { name: 'payor', sqlType: 'VARCHAR', description: 'paying entity' },
    ],
  },
  joins: {
    statement: {
      alias: 's',
      sql: 'LEFT JOIN stmt s ON s.statement_id = f.statement_id',
      requires: [],
    },
    fx: {
      alias: 'fx',
      sql: 'LEFT JOIN fx ON fx.statement_id = f.statement_id AND fx.currency = f.currency',
      requires: [],
    },
    rightsholder: {
      alias: 'r',
      sql: 'LEFT JOIN rightsholder r ON r.id = f.rightsholder_id',
      requires: [],
    },
    distributor: {
      alias: 'd',
      sql: 'LEFT JOIN distributor d ON d.id = s.distributor_id',
      requires: ['statement'],
    },
    salesType: {
      alias: 'st',
      sql: 'LEFT JOIN lk_sales_type st ON st.raw = f.sales_type',
      requires: [],
    },
    source: { alias: 'so', sql: 'LEFT JOIN lk_source so ON so.raw = f.source', requires: [] },
    catalog: {
      alias: 'cat',
      sql: 'LEFT JOIN catalog cat ON cat.rightsholder_id = f.rightsholder_id AND cat.isrc IS NOT DISTINCT FROM f.isrc AND cat.raw_title IS NOT DISTINCT FROM f.raw_title AND cat.raw_artist IS NOT DISTINCT FROM f.raw_artist',
      requires: [],
    },
    // the latest statement month of each distributor among the rows the caller may see
    latestPeriod: {
      alias: 'lp',
      sql: 'LEFT JOIN lp ON lp.distributor_id IS NOT DISTINCT FROM s.distributor_id',
      requires: ['statement'],
      cte: `SELECT s2.distributor_id, max(sm.month_index) AS month_index,
          last_day(${monthStartSql('max(sm.month_index)')}) AS period_end
        FROM statement_months sm JOIN stmt s2 ON s2.statement_id = sm.statement_id
        WHERE {scope:sm}
        GROUP BY s2.distributor_id`,
    },
  },
  expressions: {
    usd_earnings: { sql: usdOf('f.royalty_earnings'), joins: ['fx'] },
    usd_gross_earnings: { sql: usdOf('f.gross_royalty_earnings'), joins: ['fx'] },
    // The USD amount (exact: DECIMAL(38,26), scales add) at 10 decimals as answers give it: the
    // row value of the USD sums (ungrouped cube.query, the sqlQuery table, royalty_lines exports),
    // and the amount of the measures that multiply it again or sum it beside a factor: at scale 26 a sum overflows DuckDB's 38 digits
    // from 1.7e12 USD, 100 × a sum from 1.7e10, and × an age (scale 30) from about 1e8 USD-years.
    // At scale 10, × an age (DECIMAL(18,4)) is DECIMAL(38,14): 24 integer digits, and its sum the
    // same type, so 1e15 USD at 200 years fits many times over; ratios of such sums (DOUBLE,
    // rounded to 4 decimals) do not move for a 10th-decimal rounding of each row.
    usd_earnings_d10: { sql: usdAnswer('{usd_earnings}'), joins: [] },
    usd_gross_earnings_d10: { sql: usdAnswer('{usd_gross_earnings}'), joins: [] },
    product_key: {
      sql: "coalesce(cat.product_id, f.isrc, lower(f.raw_title) || '|' || lower(coalesce(f.raw_artist, '')))",
      joins: ['catalog'],
    },
    months_back: { sql: 'lp.month_index - f.month_index', joins: ['latestPeriod'] },
    right_text: { sql: 'lower(f.type_of_right)', joins: [] },
    ltm_positive: { sql: "{tm} = '01.LTM' AND {usd_earnings} > 0", joins: [] },
  },
  dimensions: [
    {
      name: 'organization_id',
      title: 'Organization ID',
      description:
        "The organization (tenant) the row belongs to. Always the caller's organization: the server injects it and strips any filter on it from the query (spec, analytics rule 3).",
      type: 'string',
      sql: 'CAST(f.organization_id AS VARCHAR)',
      joins: [],
    },
    {
      name: 'statement_id',
      title: 'Statement ID',
      description: 'The statement (uploaded file) the row came from.',
      type: 'string',
      sql: 'f.statement_id',
      joins: [],
    },
    {
      name: 'distributor_id',
      title: 'Distributor ID',
      description: "The statement's distributor (format owner); NULL when unknown.",
      type: 'string',
      sql: 's.distributor_id',
      joins: ['statement'],
    },
    {
      name: 'source_row',
      title: 'Source Row',
      description:
        "The row's position among its statement's data records (1..n, dropped rows not counted).",
      type: 'number',
      sql: 'f.source_row',
      joins: [],
    },
    {
      name: 'stmt_year',
      title: 'Statement Year',
      description: 'Calendar year of the statement period.',
      type: 'number',
      sql: 'f.stmt_year',
      joins: [],
    },
    {
      name: 'stmt_period',
      title: 'Statement Period',
      description:
        'Period within the year: 1-12 monthly, 1-4 quarterly, 1-2 half-yearly, 1 yearly.',
      type: 'number',
      sql: 'f.stmt_period',
      joins: [],
    },
    {
      name: 'stmt_cadence',
      title: 'Statement Cadence',
      description: 'M (monthly), Q (quarterly), H (half-yearly) or Y (yearly).',
      type: 'string',
      sql: 'f.stmt_cadence',
      joins: [],
    },
    {
      name: 'stmt_period_full',
      title: 'Statement Period Full',
      description:
        'Year, cadence and two-digit period in one sortable id: 2024M03, 2024Q02, 2024H01, 2024Y01. NULL when any part is unknown.',
      type: 'string',
      sql: periodIdSql({ year: 'f.stmt_year', period: 'f.stmt_period', cadence: 'f.stmt_cadence' }),
      joins: [],
    },
    {
      name: 'stmt_period_month',
      title: 'Statement Period Month',
      description:
        'The statement period as its last calendar month, shaped like a monthly period id: M2 → 2024M02, Q3 → 2024M09, H1 → 2024M06, Y1 → 2024M12.',
      type: 'string',
      sql: monthIdSql('f.month_index'),
      joins: [],
    },
    {
      name: 'currency',
      title: 'Currency',
      description: 'ISO 4217 code of the statement currency of the row.',
      type: 'string',
      sql: 'f.currency',
      joins: [],
    },
    {
      name: 'territory_raw',
      title: 'Territory Raw',
      description: 'Territory exactly as the statement wrote it.',
      type: 'string',
      sql: 'f.country_raw',
      joins: [],
    },
    {
      name: 'territory',
      title: 'Territory',
      description:
        'Normalized territory: ISO 3166-1 alpha-2 code; NULL when the raw territory was not recognized.',
      type: 'string',
      sql: 'f.country',
      joins: [],
    },
    {
      name: 'primary_rights_type',
      title: 'Primary Rights Type',
      description:
        "Publishing, Master or Neighboring. From the row's type of right when it names one, in this order: neighboring (also neighbouring) → Neighboring; master, sound recording or phonogram → Master (so 'Master Sync' is Master and 'Neighbouring Rights Performance' Neighboring); performance, mechanical, publishing, synchronization, print, lyrics or composition → Publishing; else from its sales type (Mechanical, Public Performance, Print → Publishing; Neighboring Rights → Neighboring); else Publishing when its source is a collection or publisher source; else Master when it has any other known sales type except Sync and Other; else NULL.",
      type: 'string',
      sql: `CASE
        WHEN regexp_matches({right_text}, 'neighbo') THEN 'Neighboring'
        WHEN regexp_matches({right_text}, 'master|sound recording|phonogram') THEN 'Master'
        WHEN regexp_matches({right_text}, 'perform|mechanical|publish|sync|print|lyric|composition') THEN 'Publishing'
        WHEN st.primary_sales_type IN ('Mechanical', 'Public Performance', 'Print') THEN 'Publishing'
        WHEN st.primary_sales_type = 'Neighboring Rights' THEN 'Neighboring'
        WHEN so.collection_source IS NOT NULL OR so.publisher_source IS NOT NULL THEN 'Publishing'
        WHEN st.primary_sales_type IS NOT NULL AND st.primary_sales_type NOT IN ('Sync', 'Other') THEN 'Master'
      END`,
      joins: ['salesType', 'source'],
    },
    {
      name: 'secondary_rights_type',
      title: 'Secondary Rights Type',
      description:
        "Detail of the rights type, one of Performance, Mechanical, Synchronization, Print, Neighboring or Sound Recording: from the row's type of right when it names one (neighboring first, so a neighbouring-rights performance is Neighboring, as its primary rights type is; then performance, mechanical, synchronization, print or lyrics), else from its sales type (Public Performance → Performance, Mechanical → Mechanical, Sync → Synchronization, Print → Print, Neighboring Rights → Neighboring), else Sound Recording when the primary rights type is Master, else NULL.",
      type: 'string',
      sql: `CASE
        WHEN regexp_matches({right_text}, 'neighbo') THEN 'Neighboring'
        WHEN regexp_matches({right_text}, 'perform') THEN 'Performance'
        WHEN regexp_matches({right_text}, 'mechanical') THEN 'Mechanical'
        WHEN regexp_matches({right_text}, 'sync') THEN 'Synchronization'
        WHEN regexp_matches({right_text}, 'print|lyric') THEN 'Print'
        WHEN st.primary_sales_type = 'Public Performance' THEN 'Performance'
        WHEN st.primary_sales_type = 'Mechanical' THEN 'Mechanical'
        WHEN st.primary_sales_type = 'Sync' THEN 'Synchronization'
        WHEN st.primary_sales_type = 'Print' THEN 'Print'
        WHEN st.primary_sales_type = 'Neighboring Rights' THEN 'Neighboring'
        WHEN {primary_rights_type} = 'Master' THEN 'Sound Recording'
      END`,
      joins: ['salesType', 'source'],
    },
    {
      name: 'rightsholder_id',
      title: 'Rightsholder ID',
      description:
        'The rightsholder the statement was uploaded for. Every query must filter on it.',
      type: 'string',
      sql: 'f.rightsholder_id',
      joins: [],
    },
    {
      name: 'rightsholder_name',
      title: 'Rightsholder Name',
      description: "The rightsholder's current name.",
      type: 'string',
      sql: 'r.name',
      joins: ['rightsholder'],
    },
    {
      name: 'custom_name',
      title: 'Custom Name',
      description: 'The label given to the file at ingestion; NULL when none.',
      type: 'string',
      sql: 's.custom_name',
      joins: ['statement'],
    },
    {
      name: 'file_name',
      title: 'File Name',
      description: 'Name of the uploaded statement file.',
      type: 'string',
      sql: 's.file_name',
      joins: ['statement'],
    },
    {
      name: 'account_number',
      title: 'Account Number',
      description: 'Account number on the statement row.',
      type: 'string',
      sql: 'f.account_number',
      joins: [],
    },
    {
      name: 'account_name',
      title: 'Account Name',
      description: 'Account name on the statement row.',
      type: 'string',
      sql: 'f.account_name',
      joins: [],
    },
    {
      name: 'legal_vendor',
      title: 'Legal Vendor',
      description: 'The entity that issued the statement, as the row states it.',
      type: 'string',
      sql: 'f.legal_vendor',
      joins: [],
    },
    {
      name: 'payor',
      title: 'Payor',
      description: 'The paying entity of the row, as written.',
      type: 'string',
      sql: 'f.payor',
      joins: [],
    },
    {
      name: 'track_title_raw',
      title: 'Track Title Raw',
      description: 'Track title exactly as the statement wrote it.',
      type: 'string',
      sql: 'f.raw_title',
      joins: [],
    },
    {
      name: 'track_artist_raw',
      title: 'Track Artist Raw',
      description: 'Track artist exactly as the statement wrote it.',
      type: 'string',
      sql: 'f.raw_artist',
      joins: [],
    },
    {
      name: 'track_title',
      title: 'Track Title',
      description: `Enrichment-resolved track title, before clustering: the user's correction, else the fetched title, else the raw title of the musical detail's most frequent spelling. ${FROM_CATALOG}`,
      type: 'string',
      sql: 'coalesce(cat.track_title, f.raw_title)',
      joins: ['catalog'],
    },
    {
      name: 'track_artist',
      title: 'Track Artist',
      description: `Enrichment-resolved track artist, before clustering: the user's correction, else the fetched artist, else the raw artist of the musical detail's most frequent spelling. ${FROM_CATALOG}`,
      type: 'string',
      sql: 'CASE WHEN cat.md_id IS NULL THEN f.raw_artist ELSE cat.track_artist END',
      joins: ['catalog'],
    },
    {
      name: 'release_title_raw',
      title: 'Release Title Raw',
      description: 'Release (album) title exactly as the statement wrote it.',
      type: 'string',
      sql: 'f.raw_release_title',
      joins: [],
    },
    {
      name: 'release_artist_raw',
      title: 'Release Artist Raw',
      description: 'Release (album) artist exactly as the statement wrote it.',
      type: 'string',
      sql: 'f.raw_release_artist',
      joins: [],
    },
    {
      name: 'release_title',
      title: 'Release Title',
      description: `Enrichment-resolved release title: the title of the album product the track belongs to, else the corrected or fetched album, else the raw release title. ${FROM_CATALOG}`,
      type: 'string',
      sql: 'CASE WHEN cat.md_id IS NULL THEN f.raw_release_title ELSE cat.release_title END',
      joins: ['catalog'],
    },
    {
      name: 'release_artist',
      title: 'Release Artist',
      description: `Enrichment-resolved release artist: the artist of the album product the track belongs to, else the fetched release artist, else the raw release artist. ${FROM_CATALOG}`,
      type: 'string',
      sql: 'CASE WHEN cat.md_id IS NULL THEN f.raw_release_artist ELSE cat.release_artist END',
      joins: ['catalog'],
    },
    {
      name: 'isrc',
      title: 'ISRC',
      description:
        'The ISRC of the row when it is a valid ISRC (normalized, no hyphens); else NULL.',
      type: 'string',
      sql: 'f.isrc',
      joins: [],
    },
    {
      name: 'iswc',
      title: 'ISWC',
      description: 'The ISWC of the row when valid (normalized); else NULL.',
      type: 'string',
      sql: 'f.iswc',
      joins: [],
    },
    {
      name: 'upc',
      title: 'UPC',
      description: 'The UPC/EAN of the row when valid (normalized); else NULL.',
      type: 'string',
      sql: 'f.upc',
      joins: [],
    },
    {
      name: 'other_identifier',
      title: 'Other Identifier',
      description: 'Any other identifier the statement gives for the row.',
      type: 'string',
      sql: 'f.other_identifier',
      joins: [],
    },
    {
      name: 'composers_raw',
      title: 'Composers Raw',
      description: 'Composer list exactly as the statement wrote it.',
      type: 'string',
      sql: 'f.composers',
      joins: [],
    },
    {
      name: 'other_adjustments',
      title: 'Other Adjustments',
      description: 'Other adjustments stated on the row, as written.',
      type: 'string',
      sql: 'f.other_adjustments',
      joins: [],
    },
    {
      name: 'royalty_rate',
      title: 'Royalty Rate',
      description: 'The royalty rate stated on the row.',
      type: 'number',
      sql: 'f.royalty_rate',
      joins: [],
    },
    {
      name: 'tax_deduction',
      title: 'Tax Deduction',
      description: 'Tax deduction stated on the row, in percent.',
      type: 'number',
      sql: 'f.tax_deduction',
      joins: [],
    },
    {
      name: 'territory_deduction',
      title: 'Territory Deduction',
      description: 'Territory deduction stated on the row, in percent.',
      type: 'number',
      sql: 'f.territory_deduction',
      joins: [],
    },
    {
      name: 'sales_type_raw',
      title: 'Sales Type Raw',
      description:
        'Sales type exactly as the statement wrote it. Use primary/secondary_sales_type unless raw values are asked for.',
      type: 'string',
      sql: 'f.sales_type',
      joins: [],
    },
    {
      name: 'sales_subtype_raw',
      title: 'Sales Subtype Raw',
      description: 'Sales subtype exactly as the statement wrote it.',
      type: 'string',
      sql: 'f.sub_sales_type',
      joins: [],
    },
    {
      name: 'source_raw',
      title: 'Source Raw',
      description:
        'Source exactly as the statement wrote it. Use source/earnings_source unless raw values are asked for.',
      type: 'string',
      sql: 'f.source',
      joins: [],
    },
    {
      name: 'subsource_raw',
      title: 'Subsource Raw',
      description: 'Subsource exactly as the statement wrote it.',
      type: 'string',
      sql: 'f.sub_source',
      joins: [],
    },
    {
      name: 'full_sales_type_raw',
      title: 'Full Sales Type Raw',
      description:
        "Raw sales type and subtype joined with ' | ' (either alone when the other is missing); NULL when both are.",
      type: 'string',
      sql: "NULLIF(concat_ws(' | ', f.sales_type, f.sub_sales_type), '')",
      joins: [],
    },
    {
      name: 'full_source_raw',
      title: 'Full Source Raw',
      description:
        "Raw source and subsource joined with ' | ' (either alone when the other is missing); NULL when both are.",
      type: 'string',
      sql: "NULLIF(concat_ws(' | ', f.source, f.sub_source), '')",
      joins: [],
    },
    {
      name: 'product_age',
      title: 'Product Age',
      description: `Years (days / 365.25, 4 decimals) from the product release date to the last day of the latest statement period of the row's distributor; NULL when the release date is unknown. ${RELEASE_DATES}`,
      type: 'number',
      sql: "CAST(round(date_diff('day', {product_release_date}, lp.period_end) / 365.25, 4) AS DECIMAL(18,4))",
      joins: ['latestPeriod'],
    },
    {
      name: 'product_age_bucket',
      title: 'Product Age Bucket',
      description: `Product age in whole years, rounded down, as text: '0' (also for a release after the period) to '7', and '8+' for 8 years or more; NULL when the age is unknown. ${RELEASE_DATES}`,
      type: 'string',
      sql: "CASE WHEN {product_age} IS NULL THEN NULL WHEN {product_age} >= 8 THEN '8+' WHEN {product_age} < 0 THEN '0' ELSE CAST(CAST(floor({product_age}) AS INTEGER) AS VARCHAR) END",
      joins: [],
    },
    {
      name: 'product_title',
      title: 'Product Title',
      description: `Enriched and clustered product title (preferred over track_title): the song's name, every version joined — the display title of the title cluster of the track product the row's musical detail is linked to (the track's title correction wins), else track_title. ${FROM_CATALOG}`,
      type: 'string',
      sql: 'coalesce(cat.product_title, f.raw_title)',
      joins: ['catalog'],
    },
    {
      name: 'product_artist',
      title: 'Product Artist',
      description: `Enriched and clustered product artist (preferred over track_artist): the artist of the track product the row's musical detail is linked to, else track_artist. ${FROM_CATALOG}`,
      type: 'string',
      sql: 'CASE WHEN cat.md_id IS NULL THEN f.raw_artist ELSE cat.product_artist END',
      joins: ['catalog'],
    },
    {
      name: 'product_version',
      title: 'Product Version',
      description: `Version kind of the recording within its song, from the musical detail's title: original, remaster, mono, edit, extended, remix, live, acoustic, instrumental, a cappella, karaoke, sped up, slowed, demo, re-recording, language, version, clean or explicit (the first that applies, in that order of precedence for a title naming several; original when it names none). Splits a song (product_title) by version. ${FROM_CATALOG}`,
      type: 'string',
      sql: 'CASE WHEN cat.md_id IS NULL THEN NULL ELSE cat.product_version END',
      joins: ['catalog'],
    },
    {
      name: 'primary_sales_type',
      title: 'Primary Sales Type',
      description:
        "Primary sales type (e.g. Streaming) of the sales-type lookup entry for the row's raw sales type, matched on its normalized form; NULL without an entry.",
      type: 'string',
      sql: 'st.primary_sales_type',
      joins: ['salesType'],
    },
    {
      name: 'secondary_sales_type',
      title: 'Secondary Sales Type',
      description:
        "Secondary sales type (e.g. Interactive Streaming) of the sales-type lookup entry for the row's raw sales type; NULL without an entry.",
      type: 'string',
      sql: 'st.secondary_sales_type',
      joins: ['salesType'],
    },
    {
      name: 'source',
      title: 'Source',
      description:
        "Normalized source from the source lookup entry of the row's raw source: its collection source, else its publisher source, else its earnings source; NULL without an entry.",
      type: 'string',
      sql: 'coalesce(so.collection_source, so.publisher_source, so.earnings_source)',
      joins: ['source'],
    },
    {
      name: 'earnings_collection_source',
      title: 'Earnings Collection Source',
      description: "Collection source of the source lookup entry of the row's raw source.",
      type: 'string',
      sql: 'so.collection_source',
      joins: ['source'],
    },
    {
      name: 'earnings_source',
      title: 'Earnings Source',
      description:
        "Platform or earnings source of the source lookup entry of the row's raw source.",
      type: 'string',
      sql: 'so.earnings_source',
      joins: ['source'],
    },
    {
      name: 'earnings_category',
      title: 'Earnings Category',
      description:
        "Category (streaming, download, broadcast, ...) of the source lookup entry of the row's raw source; NULL when the source is unknown.",
      type: 'string',
      sql: 'so.earnings_category',
      joins: ['source'],
    },
    {
      name: 'earnings_parent_company',
      title: 'Earnings Parent Company',
      description: 'Owner of the source, only when the source lookup entry is verified; else NULL.',
      type: 'string',
      sql: "CASE WHEN so.status = 'verified' THEN so.earnings_parent_company END",
      joins: ['source'],
    },
    {
      name: 'publisher_source',
      title: 'Publisher Source',
      description:
        'Publisher or administrator name of the source lookup entry, when the source is not a collection source.',
      type: 'string',
      sql: 'so.publisher_source',
      joins: ['source'],
    },
    {
      name: 'distributor_name',
      title: 'Distributor Name',
      description: "Current name of the statement's distributor (format owner).",
      type: 'string',
      sql: 'd.name',
      joins: ['distributor'],
    },
    {
      name: 'tm',
      title: 'Trailing Window',
      description:
        "Trailing window of the row per distributor: with A the latest statement month (stmt_period_month) of the distributor among the rows the caller may see and k the months from the row's statement month back to A: 00.TM for k = 0, 01.LTM for 1-12, 02.PTM for 13-24, then 03.TM for 25-36, 04.TM for 37-48 and so on. NULL when the row has no statement period.",
      type: 'string',
      sql: `CASE
        WHEN {months_back} IS NULL THEN NULL
        WHEN {months_back} <= 0 THEN '00.TM'
        WHEN {months_back} <= 12 THEN '01.LTM'
        WHEN {months_back} <= 24 THEN '02.PTM'
        ELSE printf('%02d.TM', ({months_back} + 11) // 12)
      END`,
      joins: [],
    },
    {
      name: 'fx_rate',
      title: 'FX Rate',
      description:
        "US dollars per unit of the row's currency applied to its statement (the rate of the statement period's last day or the nearest earlier published day), shown to 14 decimals; the USD amounts use it to 18. NULL when no rate is known; USD rows have 1.",
      type: 'number',
      sql: 'fx.rate',
      joins: ['fx'],
    },
    {
      name: 'sales_period_start',
      title: 'Sales Period Start',
      description: 'First day of the sales period of the row.',
      type: 'time',
      sql: 'f.sales_period_start',
      joins: [],
    },
    {
      name: 'sales_period_end',
      title: 'Sales Period End',
      description: 'Last day of the sales period of the row.',
      type: 'time',
      sql: 'f.sales_period_end',
      joins: [],
    },
    {
      name: 'release_date',
      title: 'Release Date',
      description: `Release date of the track: its musical detail's corrected, else fetched, release date. ${RELEASE_DATES}`,
      type: 'time',
      sql: 'cat.release_date',
      joins: ['catalog'],
    },
    {
      name: 'release_release_date',
      title: 'Release Release Date',
      description: `Release date of the release (album) level: the album product's (the earliest of its tracks', or its correction), else the track product's. ${RELEASE_DATES}`,
      type: 'time',
      sql: 'cat.release_release_date',
      joins: ['catalog'],
    },
    {
      name: 'product_release_date',
      title: 'Product Release Date',
      description: `Release date of the song: the earliest release date among the track products of its title cluster and artist (each the earliest among its musical details, or the product's correction). ${RELEASE_DATES}`,
      type: 'time',
      sql: 'cat.product_release_date',
      joins: ['catalog'],
    },
  ],
  measures: [
    {
      name: 'statement_count',
      title: 'Statement Count',
      description: 'Number of distinct statements among the rows.',
      type: 'number',
      aggType: 'countDistinct',
      sql: 'count(DISTINCT f.statement_id)',
      joins: [],
      rollup: 'same',
    },
    {
      name: 'statement_row_count',
      title: 'Statement Row Count',
      description: 'Number of statement records (rows).',
      type: 'number',
      aggType: 'count',
      sql: 'count(*)',
      joins: [],
      // coalesce: count(*) of no rows is 0, a sum of no groups NULL
      rollup: { sql: 'coalesce(sum(f.row_count), 0)' },
    },
    {
      name: 'royalty_earnings',
      title: 'Royalty Earnings',
      description:
        'Sum of net earnings in the statement currency (exact decimal). Use only when the original currency is asked for; mixing currencies adds unlike amounts.',
      type: 'number',
      aggType: 'sum',
      sql: 'sum(f.royalty_earnings)',
      joins: [],
      rollup: 'same',
      rowSql: 'f.royalty_earnings',
    },
    {
      name: 'gross_royalty_earnings',
      title: 'Gross Royalty Earnings',
      description: 'Sum of gross earnings in the statement currency (exact decimal).',
      type: 'number',
      aggType: 'sum',
      sql: 'sum(f.gross_royalty_earnings)',
      joins: [],
      rollup: 'same',
      rowSql: 'f.gross_royalty_earnings',
    },
    {
      name: 'units',
      title: 'Units',
      description: 'Sum of units (sales, streams, quantity) per row.',
      type: 'number',
      aggType: 'sum',
      sql: 'sum(f.units)',
      joins: [],
      rollup: 'same',
      rowSql: 'f.units',
    },
    {
      name: 'royalty_earnings_usd',
      title: 'Royalty Earnings USD',
      description:
        'Sum of net earnings converted to US dollars, row by row: earnings × the statement exchange rate (fx_rate), summed exactly, then rounded once to 10 decimals, half to even. Rows without a known rate count as NULL, never at 1. The default monetary measure.',
      type: 'number',
      aggType: 'sum',
      format: 'currency',
      sql: usdSum('f.royalty_earnings'),
      joins: ['fx'],
      rollup: 'same',
      rowSql: '{usd_earnings_d10}',
    },
    {
      name: 'gross_royalty_earnings_usd',
      title: 'Gross Royalty Earnings USD',
      description:
        'Sum of gross earnings converted to US dollars: gross earnings × the statement exchange rate (fx_rate), summed exactly, then rounded once to 10 decimals, half to even; NULL without a rate.',
      type: 'number',
      aggType: 'sum',
      format: 'currency',
      sql: usdSum('f.gross_royalty_earnings'),
      joins: ['fx'],
      rollup: 'same',
      rowSql: '{usd_gross_earnings_d10}',
    },
    {
      name: 'product_dollar_age',
      title: 'Product Dollar Age',
      description: `Earnings-weighted mean product age in years (4 decimals): sum(royalty_earnings_usd × product_age) / sum(royalty_earnings_usd) over the rows in 01.LTM with a known product age and positive USD earnings; NULL when there are none. ${RELEASE_DATES}`,
      type: 'number',
      aggType: 'number',
      sql: 'CAST(round(sum({usd_earnings_d10} * {product_age}) FILTER (WHERE {ltm_positive} AND {product_age} IS NOT NULL) / sum({usd_earnings_d10}) FILTER (WHERE {ltm_positive} AND {product_age} IS NOT NULL), 4) AS DECIMAL(18,4))',
      joins: [],
      rollup: null,
    },
    {
      name: 'fetching_percentage',
      title: 'Fetching Percentage',
      description:
        'Percentage (4 decimals) of USD earnings on tracks whose metadata resolution is complete, successful or not: 100 × sum(royalty_earnings_usd) of the rows whose musical detail is found, not found, skipped or failed / sum(royalty_earnings_usd) of all rows; rows whose track is not in the catalog yet count as unresolved; when the USD earnings sum to 0 or are unknown this is 0.',
      type: 'number',
      aggType: 'number',
      format: 'percent',
      sql: 'coalesce(CAST(round(100 * sum({usd_earnings_d10}) FILTER (WHERE cat.resolved) / NULLIF(sum({usd_earnings_d10}), 0), 4) AS DECIMAL(18,4)), CAST(0 AS DECIMAL(18,4)))',
      joins: ['catalog'],
      rollup: null,
    },
    {
      name: 'product_age_avg',
      title: 'Product Age Avg',
      description: `Average product age in years (4 decimals) over the rows with a known release date; 0 when none is known. ${RELEASE_DATES}`,
      type: 'number',
      aggType: 'avg',
      sql: 'coalesce(CAST(round(avg({product_age}), 4) AS DECIMAL(18,4)), CAST(0 AS DECIMAL(18,4)))',
      joins: [],
      rollup: null,
    },
    {
      name: 'product_age_percentage',
      title: 'Product Age Percentage',
      description: `Percentage (4 decimals) of distinct products with a known age; 0 when there are no products. A product is the catalog's track product of the row, else (not in the catalog yet) its ISRC, else its lower-cased raw title and artist. ${RELEASE_DATES}`,
      type: 'number',
      aggType: 'number',
      format: 'percent',
      sql: 'coalesce(CAST(round(100 * count(DISTINCT {product_key}) FILTER (WHERE {product_age} IS NOT NULL) / NULLIF(count(DISTINCT {product_key}), 0), 4) AS DECIMAL(18,4)), CAST(0 AS DECIMAL(18,4)))',
      joins: [],
      rollup: null,
    },
    {
      name: 'product_dollar_age_percentage',
      title: 'Product Dollar Age Percentage',
      description: `Percentage (4 decimals) of the positive USD earnings in 01.LTM that is on rows with a known product age (rows with zero or negative USD earnings are left out of both sides); 0 when there are none. ${RELEASE_DATES}`,
      type: 'number',
      aggType: 'number',
      format: 'percent',
      sql: 'coalesce(CAST(round(100 * sum({usd_earnings_d10}) FILTER (WHERE {ltm_positive} AND {product_age} IS NOT NULL) / NULLIF(sum({usd_earnings_d10}) FILTER (WHERE {ltm_positive}), 0), 4) AS DECIMAL(18,4)), CAST(0 AS DECIMAL(18,4)))',
      joins: [],
      rollup: null,
    },
  ],
  rollups: [
    {
      name: 'statement_territory_source',
      table: 'rollup_statement',
      description:
        'Sums per statement (and so per rightsholder and distributor), statement period, currency, territory, raw source, raw sales type and sales period: answers earnings, units, row and statement counts by any of those and by everything the joins derive from them (names, lookups, fx, tm).',
      groupBy: [
        'organization_id',
        'statement_id',
        'rightsholder_id',
        'stmt_year',
        'stmt_period',
        'stmt_cadence',
        'month_index',
        'currency',
        'country',
        'source',
        'sales_type',
        'sales_period_start',
        'sales_period_end',
      ],
      sums: ['royalty_earnings', 'gross_royalty_earnings', 'units'],
      countColumn: 'row_count',
    },
  ],
};
