// What the normalizer thread (workers/normalize.ts, the `normalize` task) takes and answers:
// shared by the thread and its callers, so that src/ needs nothing from workers/.
import type { MappingFields } from './mappingFields.ts';
import type { Cadence, DateOrder, DateSystem } from './values.ts';

export interface NormalizeInput {
  csvPath: string;
  delimiter: string;
  quote: '"' | '';
  headerLine: number;
  header: string[];
  footerRecords: number;
  fields: MappingFields;
  decimalComma: Record<string, boolean>;
  dateOrder: Record<string, DateOrder>;
  /** the workbook's date system (LocatedTable.dateSystem): what a bare Excel serial in a column means; default 1900 */
  dateSystem?: DateSystem;
  fileName: string;
  variables: Record<string, string>;
  statementId: string;
  organizationId: string;
  rightsholderId: string;
  /** where to write the normalized Parquet (and the dropped rows as CSV); null for a preview */
  outPath: string | null;
  removedPath: string | null;
  /** the `trimmed` variant: header and data rows as in the file, preamble and footer removed */
  trimmedPath?: string | null;
  /** the `standardized` variant: data rows with columns renamed to the standard fields, values as read */
  standardizedPath?: string | null;
  /** write only the trimmed and standardized variants (produced on first request, not by the pipeline) */
  variantsOnly?: boolean;
  /** the byte offset of a record where a second reader may start (LocatedTable.splitOffset) */
  splitOffset?: number;
  /** preview only these data records (1-based, inclusive start, exclusive end) */
  range?: { start: number; end: number };
  threads?: number;
  memoryLimitMb?: number;
  timeBudgetMs?: number;
  /**
   * Where this thread reports its progress while it writes the normalized file, in an Int32Array
   * of two over this buffer, stored with Atomics (the caller reads them with Atomics.load): [1] the
   * rows below the header (NormalizeOutput.dataRows, known once the survey has counted them), [0]
   * how many of those the written pass has read so far (an estimate from DuckDB's progress through
   * the file, polled every `progressEveryMs`, default 250). [0] only grows, and is [1] at the end.
   */
  progress?: SharedArrayBuffer;
  progressEveryMs?: number;
}

export interface CurrencyTotals {
  currency: string | null;
  rows: number;
  net: string | null;
  gross: string | null;
  units: string | null;
}

export interface NormalizeOutput {
  dataRows: number;
  keptRows: number;
  dropped: { reason: string; rows: number }[];
  /** net and gross of all rows when they are in one currency (else null: see perCurrency) */
  net: string | null;
  gross: string | null;
  units: string | null;
  perCurrency: CurrencyTotals[];
  stmt: { year: number; period: number; cadence: Cadence } | null;
  stmtPeriods: number;
  salesPeriodStart: string | null;
  salesPeriodEnd: string | null;
  /** `amounts`: the net earnings of the value's rows per currency (a statement may have several; null: rows without one) */
  rawValues: {
    kind: 'sales_type' | 'source';
    raw: string;
    rows: number;
    amount: string | null;
    amounts: { currency: string | null; amount: string | null }[];
  }[];
  payors: string[];
  issues: {
    invalidAmounts: number;
    missingAmounts: number;
    invalidIsrc: number;
    invalidUpc: number;
    unknownCountries: string[];
    unknownCurrencies: string[];
    missingStmtPeriod: number;
    /** rows with a cell beyond the header's last column (not read: no mapping can name it) */
    extraCells: number;
  };
  preview?: Record<string, unknown>[];
  /**
   * per header name, whether the column's numbers were read with a decimal comma: the file
   * reader's decision, or the other rule where every number of the column fits only that one
   */
  decimalComma?: Record<string, boolean>;
  /** milliseconds per step */
  timings?: Record<string, number>;
}

/**
 * The removed-rows file of a table `width` cells wide with nothing removed: its header alone, as
 * DuckDB writes it (its names need no quotes). The normalizer writes it; a run with no preamble
 * either leaves it to be written on first request (src/ingest/variants.ts).
 */
export function emptyRemovedCsv(width: number): string {
  return `record,reason,${Array.from({ length: width }, (_, i) => `c${i}`).join(',')}\n`;
}

/** The columns of a normalized row, in Parquet order (snake_case of the standard fields). */
export const normalizedColumns = [
  'organization_id',
  'statement_id',
  'rightsholder_id',
  'source_row',
  'stmt_year',
  'stmt_period',
  'stmt_cadence',
  'currency',
  'royalty_earnings',
  'gross_royalty_earnings',
  'units',
  'sales_period_start',
  'sales_period_end',
  'sales_type',
  'sub_sales_type',
  'source',
  'sub_source',
  'country_raw',
  'country',
  'type_of_right',
  'account_number',
  'account_name',
  'legal_vendor',
  'territory_deduction',
  'tax_deduction',
  'royalty_rate',
  'other_adjustments',
  'raw_title',
  'raw_artist',
  'raw_release_title',
  'raw_release_artist',
  'composers',
  'isrc_raw',
  'isrc',
  'upc_raw',
  'upc',
  'iswc',
  'other_identifier',
  'payor',
] as const;
