// The statement file reader's contract (workers/statementFile.ts, function locateTable): which
// bytes, encoding, delimiter, sheet and rows of an uploaded statement hold its table.
import type { NormalizeInput } from './normalizeTypes.ts';

export interface LocateLimits {
  /** total bytes any archive, gzip stream or workbook may inflate to */
  maxDecompressedBytes?: number;
  /** entries an archive or workbook may hold */
  maxEntries?: number;
  /** inflated / compressed bytes of one entry (checked once it passes 1 MiB) */
  maxRatio?: number;
  /** wall-clock budget of one call */
  timeBudgetMs?: number;
  /** the longest field (and physical record) accepted */
  maxFieldBytes?: number;
}

export interface LocateInput {
  /** local file with the uploaded bytes */
  sourcePath: string;
  /** as uploaded (the extension is a hint only; content is sniffed) */
  fileName: string;
  /** a private temporary directory the reader may write into */
  workDir: string;
  limits?: LocateLimits;
  /** the text encoding the uploader named (iconv-lite's name): text files are read in it, never detected */
  encoding?: string;
}

/**
 * Why a row is not data. A PDF's (line -1, not in csvPath) may also be `page_margin`, a page's
 * header or footer (`Page 2 of 5`, the box every page repeats), or `subtotal`, a total between the
 * detail rows checked against the rows it closes (src/ingest/file/pdfTable.ts).
 */
export type RemovedReason =
  'preamble' | 'footer' | 'blank' | 'repeated_header' | 'summary' | 'page_margin' | 'subtotal';

export interface RemovedRow {
  /**
   * 0-based physical line in csvPath; -1 for a row above the data of a sheet joined to the table
   * (its preamble, blank rows and header: not in csvPath, see `sheet.combined`)
   */
  line: number;
  reason: RemovedReason;
  cells: string[];
}

/** What a labelled footer total counts: the money (net earnings), the units, or the rows. */
export type FooterMeasure = 'amount' | 'units' | 'rows';

/** A footer row (below the data) read as the statement's own figures. */
export interface FooterTotal {
  /** the row's label (its first cell, without an inline `:value`); '' for a row of numbers only */
  label: string;
  /** the row's numbers as written, keyed by the header name of the column they sit in */
  values: Record<string, string>;
  /**
   * 'total': a total of the rows (`Total`, `Grand Total`, `Total_Amount`), checked against their sum;
   * 'balance': a balance line (`Balance Brought Forward`, `Opening balance`, `Carried forward`,
   * `Amount Payable`, `Payment`), statement-level metadata never compared with the rows
   */
  kind: 'total' | 'balance';
  /** a labelled row's one number as written (`Total_Amount<tab>206.89`, `Total_Amount:32.68`), wherever it sits */
  value?: string;
  /** what a total's label says it counts (`Total_Amount`/`Total Amount` → amount, `Total_Units` → units, `Total_Rows`/`Row Count` → rows); set with `value` */
  measure?: FooterMeasure;
}

export interface SheetCandidate {
  name: string;
  /** records in the sheet (rows written to its CSV) */
  rows: number;
  score: number;
  skipped?: string;
}

export interface LocatedTable {
  container: 'none' | 'gzip' | 'zip' | 'tar';
  /** 'xls': a legacy BIFF workbook, read with SheetJS (docs/decisions/sheetjs-for-xls.md); 'pdf': a PDF's text layer (docs/pdf-statements.md) */
  format: 'delimited' | 'xlsx' | 'xls' | 'pdf';
  /**
   * 'utf-8', 'utf-8-bom', 'utf-16le', 'utf-16be', 'windows-1252', or 'utf-8+windows-1252' for mixed
   * lines; for archive members read as one table, their encodings in archive order joined by '+'
   */
  encoding: string;
  /**
   * the sheet read; with `combined`, the sheets (in workbook order, `name` the first) whose rows
   * were read as one table because they share its header (src/ingest/file/combine.ts)
   */
  sheet: { name: string; index: number; candidates: SheetCandidate[]; combined?: string[] } | null;
  /**
   * the archive member the table was read from, when the upload was a zip (or tar in gzip); with
   * `combined`, the members (in archive order, `name` the first) whose rows were read as one table
   * because they share its header and dialect (src/ingest/file/combine.ts)
   */
  archiveEntry: { name: string; candidates: SheetCandidate[]; combined?: string[] } | null;
  /**
   * the workbook the table was read from (its file and its name), when it is one: the upload
   * itself, or a file unpacked from it (a workbook in a zip or gzip), which the `original-excel`
   * variant then stores; absent for text and for tables joined from several files
   */
  workbook?: { path: string; name: string };
  /** UTF-8 (no BOM) delimited text readable by DuckDB read_csv: the original file when already clean, else a copy in workDir */
  csvPath: string;
  delimiter: ',' | ';' | '\t' | '|';
  /** '' when quoting must be disabled (TSV with literal quotes inside values) */
  quote: '"' | '';
  /** 0-based physical line of the header in csvPath (read_csv skip = headerLine + 1 reaches the data) */
  headerLine: number;
  /** header cells trimmed, trailing empty cells dropped, duplicates suffixed ' (2)', ' (3)' */
  header: string[];
  headerHash: string;
  /** data records between header and footer; blank lines and repeated header lines are not counted */
  dataRecords: number;
  /** non-blank records after the data region (totals, summaries, balance lines); repeated header lines there are not counted */
  footerRecords: number;
  /** every non-data row, at most 10,000 entries (removedTotal says how many there are) */
  removed: RemovedRow[];
  removedTotal: number;
  /** key/value metadata above the header (Period, Currency, Payee, Account ...) */
  preambleValues: Record<string, string>;
  /** the footer's totals and balance lines, in file order (see FooterTotal) */
  footerTotals: FooterTotal[];
  /** per header name of columns holding numbers: true when they use a decimal comma */
  decimalComma: Record<string, boolean>;
  /** per header name of date-like columns: the day/month order */
  dateOrder: Record<string, 'MDY' | 'DMY' | 'YMD'>;
  /**
   * a workbook's date system (`date1904` in xl/workbook.xml): what a bare Excel serial in csvPath
   * means (a number formatted General, written as it is; date-formatted cells are already ISO
   * dates); 1900 or absent for text files
   */
  dateSystem?: 1900 | 1904;
  /** a large file's byte offset in csvPath of a record in its second half, where a second reader may start; absent for a file read whole */
  splitOffset?: number;
  /** up to 50 first data rows */
  sampleRows: string[][];
  /**
   * What the reader noticed about the file itself: `rowLimitSheets`, the sheets read whose last row
   * is Excel's last (1,048,576), or the file's name for delimited text of exactly 1,048,576 lines
   * (an export that was probably cut off there); `hiddenRows`, the rows with content the workbook
   * hides, summed over the sheets read (they are read all the same). Files of an archive read as
   * one keep each file's: named by their archive names (`jan.xlsx: Sales` for a sheet), hidden rows
   * summed; `uncertainEncoding`, a text file not in UTF-8 whose legacy encoding was a guess among
   * others nearly as likely (`candidates`, the one read first). Absent when there is nothing.
   */
  readerNotes?: {
    rowLimitSheets?: string[];
    hiddenRows?: number;
    uncertainEncoding?: { candidates: string[] };
  };
}

export const REMOVED_CAP = 10_000;
export const SAMPLE_ROWS = 50;

/** What the normalizer reads from the file reader's located table (every caller passes the same). */
export function tableOf(
  located: LocatedTable,
): Pick<
  NormalizeInput,
  | 'csvPath'
  | 'delimiter'
  | 'quote'
  | 'headerLine'
  | 'header'
  | 'footerRecords'
  | 'splitOffset'
  | 'decimalComma'
  | 'dateOrder'
  | 'dateSystem'
> {
  return {
    csvPath: located.csvPath,
    delimiter: located.delimiter,
    quote: located.quote,
    headerLine: located.headerLine,
    header: located.header,
    footerRecords: located.footerRecords,
    splitOffset: located.splitOffset,
    decimalComma: located.decimalComma,
    dateOrder: located.dateOrder,
    dateSystem: located.dateSystem,
  };
}
