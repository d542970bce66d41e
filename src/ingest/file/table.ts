// Where the table is among parsed records: the header row chosen by scoring candidate rows, the
// preamble above it, and the region after it split into data and a trailer (totals, balance
// lines, a summary table).
import { normalizeHeaderCell } from '../headerHash.ts';
import type { FooterMeasure, FooterTotal, RemovedReason } from '../fileTypes.ts';
import { type CellKind, cellKind, numberBody } from './cells.ts';
import { FileError } from './limits.ts';
import { hasHeaderKeyword, isKnownHeader } from './vocabulary.ts';

export interface Rec {
  cells: string[];
  /** 0-based physical line where the record starts */
  line: number;
}

interface Filled {
  index: number;
  text: string;
}

export function filled(cells: readonly string[]): Filled[] {
  const out: Filled[] = [];
  for (let i = 0; i < cells.length; i++) {
    const text = cells[i]!.trim();
    if (text !== '') out.push({ index: i, text });
  }
  return out;
}

export interface HeaderChoice {
  index: number;
  score: number;
  vocabShare: number;
}

const HEADER_CANDIDATES = 60;
const FOLLOWING = 20;
const MIN_HEADER_SCORE = 3;
/** rows under a header that give its table's shape (`profileOf` reads no more) */
const PROFILE_SAMPLE = 200;

/**
 * The header is the row that looks most like one: mostly text, names statements use, distinct,
 * and followed by rows of about its width whose cells are numbers or dates where it has words.
 * Never simply the first non-empty row. A file may hold a second, shorter table after the detail
 * (Apple's `Country Of Sale` summary block): its header can score as well as the detail's, so a
 * best row that an earlier header's table reads as its summary header (see `kindOf`), with at
 * least as many data rows above it as it has rows of its own, loses to that earlier header.
 */
export function findHeader(records: readonly Rec[]): HeaderChoice | null {
  const scored: Candidate[] = [];
  let best: Candidate | null = null;
  const look = new RowLook();
  for (const index of firstNonBlankRows(records, HEADER_CANDIDATES, look)) {
    const choice = scoreHeaderRow(records, index, look);
    if (!choice) continue;
    scored.push(choice);
    if (!best || choice.score > best.score + 1e-9) best = choice;
  }
  if (!best || best.score < MIN_HEADER_SCORE) return null;
  best = tableAfterKeyRow(records, scored, best) ?? best;
  const chosen = summaryOwner(records, scored, best) ?? best;
  return { index: chosen.index, score: chosen.score, vocabShare: chosen.vocabShare };
}

/** A scored header row, with its number of filled cells. */
type Candidate = HeaderChoice & { width: number };

/**
 * A record's filled cells and each cell's kind (by column), worked out once per record: the header
 * search reads the same rows below every candidate row (for a small file, every row of it).
 */
class RowLook {
  private readonly memo = new Map<readonly string[], { filled: Filled[]; kinds: CellKind[] }>();

  of(cells: readonly string[]): { filled: Filled[]; kinds: CellKind[] } {
    let look = this.memo.get(cells);
    if (!look) {
      look = { filled: filled(cells), kinds: cells.map((c) => cellKind(c)) };
      this.memo.set(cells, look);
    }
    return look;
  }
}

/** The indexes of the first `cap` records that have a filled cell. */
function firstNonBlankRows(records: readonly Rec[], cap: number, look: RowLook): number[] {
  const rows: number[] = [];
  for (let i = 0; i < records.length && rows.length < cap; i++)
    if (look.of(records[i]!.cells).filled.length > 0) rows.push(i);
  return rows;
}

/**
 * How much the record at `index` looks like a header; null when it has fewer than two cells or
 * too few words to be one.
 */
function scoreHeaderRow(records: readonly Rec[], index: number, look: RowLook): Candidate | null {
  const row = look.of(records[index]!.cells);
  const cells = row.filled;
  const n = cells.length;
  if (n < 2) return null;
  // one- to three-letter capitals (currency, country, record-type codes) are values, unless a known name
  const kinds = cells.map((c) => {
    const kind = row.kinds[c.index]!;
    return kind === 'text' && /^[A-Z]{1,3}$/.test(c.text) && !isKnownHeader(c.text) ? 'code' : kind;
  });
  const text = kinds.filter((x) => x === 'text').length / n;
  if (text < 0.6) return null;
  const vocab = cells.filter((c) => isKnownHeader(c.text)).length / n;
  const keyword = cells.filter((c) => hasHeaderKeyword(c.text)).length / n;
  const distinct = new Set(cells.map((c) => normalizeHeaderCell(c.text))).size / n;
  const { consistent, contrast } = fitOfRowsBelow(
    cells,
    kinds,
    rowsFollowing(records, index, look),
    look,
  );
  const score =
    2 * text +
    3 * vocab +
    keyword +
    1.5 * consistent +
    2 * contrast +
    0.5 * distinct +
    (0.5 * Math.min(n, 12)) / 12;
  return { index, score, vocabShare: vocab, width: n };
}

/** The rows below the record at `index`, up to the next blank line: a summary table further down is not its table. */
function rowsFollowing(records: readonly Rec[], index: number, look: RowLook): string[][] {
  const following: string[][] = [];
  for (let i = index + 1; i < records.length && following.length < FOLLOWING; i++) {
    const cells = records[i]!.cells;
    if (look.of(cells).filled.length > 0) following.push(cells);
    else if (following.length > 0) break;
  }
  return following;
}

/**
 * How well the rows below fit a header row: the share of them about its width (`consistent`), and
 * the share of its word columns whose cells below are mostly numbers, dates or ids (`contrast`).
 */
function fitOfRowsBelow(
  cells: readonly Filled[],
  kinds: readonly string[],
  following: readonly string[][],
  look: RowLook,
): { consistent: number; contrast: number } {
  if (following.length === 0) return { consistent: 0.5, contrast: 0 };
  const n = cells.length;
  const consistent =
    following.filter((f) => {
      const r = look.of(f).filled.length;
      return r >= 0.5 * n && r <= 1.5 * n + 1;
    }).length / following.length;
  const textColumns = cells.filter((_, j) => kinds[j] === 'text');
  let typed = 0;
  for (const col of textColumns) {
    let nonText = 0;
    for (const f of following) {
      const kind = look.of(f).kinds[col.index] ?? 'empty';
      if (kind === 'number' || kind === 'date' || kind === 'id') nonText++;
    }
    if (nonText * 2 >= following.length) typed++;
  }
  const contrast = textColumns.length > 0 ? typed / textColumns.length : 0;
  return { consistent, contrast };
}

/**
 * A key row over its one value row (`Account ID,Period,Currency` / `12345,2024-03,EUR`) scores like
 * a header: when a blank line closes it and a header at least as wide with more rows under it
 * follows, that block is the preamble's and the later header (the best-scoring such) the table's.
 */
function tableAfterKeyRow(
  records: readonly Rec[],
  scored: readonly Candidate[],
  best: Candidate,
): Candidate | null {
  const ownBlock = rowsBelow(records, best.index, 2);
  if (ownBlock > 1) return null;
  let table: Candidate | null = null;
  for (const e of scored) {
    if (e.index <= best.index || e.score < MIN_HEADER_SCORE || e.width < best.width) continue;
    if (table && e.score <= table.score + 1e-9) continue;
    if (rowsBelow(records, e.index, 2) > ownBlock) table = e;
  }
  return table;
}

/**
 * The best row may open the summary block of an earlier table: the best-scoring such table's
 * header (a wider header with at least as many data rows down to it as the best row has under it).
 */
function summaryOwner(
  records: readonly Rec[],
  scored: readonly Candidate[],
  best: Candidate,
): Candidate | null {
  let owner: Candidate | null = null;
  let ownRows = -1;
  for (const e of scored) {
    if (e.index >= best.index) break;
    if (e.score < MIN_HEADER_SCORE || best.width >= e.width) continue;
    if (owner && e.score <= owner.score + 1e-9) continue;
    const dataAbove = dataRowsBefore(records, e.index, best.index);
    if (dataAbove === 0) continue;
    // candidates lie among the first HEADER_CANDIDATES non-blank rows: no more data rows above
    if (ownRows < 0) ownRows = rowsBelow(records, best.index, HEADER_CANDIDATES);
    if (dataAbove >= ownRows) owner = e;
  }
  return owner;
}

/** The shape of the table under the header at `index`: its rows up to the first blank line. */
export function profileBelow(records: readonly Rec[], index: number): Profile {
  const header = buildHeader(records[index]!.cells);
  const rows: Rec[] = [];
  for (let i = index + 1; i < records.length && rows.length < PROFILE_SAMPLE; i++) {
    if (filled(records[i]!.cells).length > 0) rows.push(records[i]!);
    else if (rows.length > 0) break;
  }
  return profileOf(header, rows);
}

/**
 * The data rows of the table under the header at `index` above its summary block, when the
 * record `at` reads as a summary header of that table (and so lies in its trailer); else 0.
 */
function dataRowsBefore(records: readonly Rec[], index: number, at: number): number {
  const profile = profileBelow(records, index);
  if (kindOf(records[at]!.cells, profile) !== 'summary_header') return 0;
  let data = 0;
  for (let i = index + 1; i < at; i++) {
    const kind = kindOf(records[i]!.cells, profile);
    // an earlier summary header: the trailer starts there, `at` is further into it
    if (kind === 'summary_header') break;
    if (kind === 'data' || kind === 'note') data++;
  }
  return data;
}

/** The non-blank rows right under the record at `index`, up to the next blank line, counted up to `cap`. */
function rowsBelow(records: readonly Rec[], index: number, cap: number): number {
  let rows = 0;
  for (let i = index + 1; i < records.length && rows < cap; i++) {
    if (filled(records[i]!.cells).length === 0) break;
    rows++;
  }
  return rows;
}

export interface Header {
  /** as written, trimmed, trailing empty cells dropped */
  raw: string[];
  /** duplicates suffixed ' (2)', ' (3)' */
  names: string[];
}

export function buildHeader(cells: readonly string[]): Header {
  const raw = cells.map((c) => c.trim());
  while (raw.length > 0 && raw[raw.length - 1] === '') raw.pop();
  const seen = new Map<string, number>();
  const names = raw.map((name) => {
    if (name === '') return name;
    const key = normalizeHeaderCell(name);
    const count = (seen.get(key) ?? 0) + 1;
    seen.set(key, count);
    return count === 1 ? name : `${name} (${count})`;
  });
  return { raw, names };
}

/** Key/value metadata above the header: `Period,2024-03`, `Currency: EUR`, or a key row above a value row. */
export function preambleValues(rows: readonly Rec[]): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  const put = (key: string, value: string) => {
    const k = key.replace(/[:：]\s*$/, '').trim();
    if (k === '' || k.length > 60 || value === '' || Object.hasOwn(out, k)) return;
    out[k] = value;
  };
  for (let r = 0; r < rows.length; r++) {
    const cells = filled(rows[r]!.cells);
    if (cells.length === 1) {
      const only = cells[0]!.text;
      const colon = only.indexOf(':');
      if (colon > 0 && colon < 60 && only.slice(colon + 1).trim() !== '') {
        put(only.slice(0, colon), only.slice(colon + 1).trim());
        continue;
      }
      // SoundCloud: "Account ID" on one row, the id on the next, in the same column
      const next = r + 1 < rows.length ? filled(rows[r + 1]!.cells) : [];
      const value = next.length === 1 ? next[0]!.text : '';
      const valueLike =
        value !== '' && !value.includes(':') && (cellKind(value) !== 'text' || !/\s/.test(value));
      if (
        valueLike &&
        next[0]!.index === cells[0]!.index &&
        cellKind(only) === 'text' &&
        only.length <= 60
      ) {
        put(only, next[0]!.text);
        r++;
      }
      continue;
    }
    // a key row over a value row in the same columns (`Payee,Account,Period` / `Orla,12345,2024-03`);
    // two cells over two whose first is a word are rather two `key,value` lines
    const below = r + 1 < rows.length ? filled(rows[r + 1]!.cells) : [];
    const keyRow =
      below.length === cells.length &&
      below.every((c, i) => c.index === cells[i]!.index) &&
      cells.every((c) => cellKind(c.text) === 'text');
    if (
      keyRow &&
      below.some((c) => cellKind(c.text) !== 'text') &&
      (cells.length >= 3 || cellKind(below[0]!.text) !== 'text')
    ) {
      cells.forEach((c, i) => put(c.text, below[i]!.text));
      r++;
      continue;
    }
    if (cells.length === 2 && cellKind(cells[0]!.text) === 'text') {
      put(cells[0]!.text, cells[1]!.text);
      continue;
    }
    for (let i = 0; i + 1 < cells.length; i++) {
      if (cells[i]!.text.endsWith(':')) {
        put(cells[i]!.text, cells[i + 1]!.text);
        i++;
      }
    }
  }
  return out;
}

export type Kind =
  'blank' | 'repeated_header' | 'total' | 'number_only' | 'summary_header' | 'note' | 'data';

export interface Profile {
  header: Header;
  width: number;
  numericColumns: Set<number>;
  medianFilled: number;
  /** the column of each header name (normalized), its first when repeated */
  columnOf: Map<string, number>;
}

const TOTAL_LABELS = [
  'total',
  'totals',
  'grand total',
  'sub total',
  'sub-total',
  'subtotal',
  'sum',
  'balance',
  'amount payable',
  'amount due',
  'net payable',
  'closing balance',
  'opening balance',
  'brought forward',
  'carried forward',
  'payable',
  'payment due',
  'payment',
  'payments',
  'amount paid',
  'previous balance',
  // labelled counts and totals that do not start with "total" (Row Count 18, Units Total 96)
  'row count',
  'record count',
  'line count',
  'number of rows',
  'number of records',
  'number of lines',
  'amount total',
  'units total',
  'quantity total',
];

/** A label compared: lower case, `_` as a space, white space collapsed, a closing `:` or `=` dropped. */
function labelKey(text: string): string {
  return text
    .toLowerCase()
    .replace(/_/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/\s?[:=]$/, '');
}

function isTotalLabel(text: string): boolean {
  const s = text.toLowerCase().replace(/_/g, ' ').trim();
  return TOTAL_LABELS.some((l) => s === l || (s.startsWith(l) && !/[a-z0-9]/.test(s[l.length]!)));
}

/**
 * Balance lines (`Balance Brought Forward`, `Opening balance`, `Carried forward`, `Amount Payable`,
 * `Payment`) are statement-level figures: the rows plus or minus what came before or was paid,
 * never a total of the rows. A label that starts with "total" is a total (`Total Royalty Payable`)
 * unless it names a balance.
 */
export function isBalanceLabel(text: string): boolean {
  const s = labelKey(text);
  if (/(?:^| )(?:balance|balances|brought forward|carried forward|b\/f|c\/f)(?: |$)/.test(s))
    return true;
  return /^(?:amount (?:payable|due|paid)|net payable|payable|payment|payments|paid)(?: |$)/.test(
    s,
  );
}

/** What a labelled total counts, from its label: `Total_Amount`, `Total Units`, `Total_Rows`, `Row Count`. */
export function measureOfLabel(text: string): FooterMeasure | null {
  const s = labelKey(text);
  if (/^(?:total (?:net )?amount|(?:net )?amount total)$/.test(s)) return 'amount';
  if (/^(?:total (?:units|quantity|qty)|(?:units|quantity|qty) total)$/.test(s)) return 'units';
  if (
    /^(?:total (?:rows|records|lines)|(?:row|record|line) count|number of (?:rows|records|lines))$/.test(
      s,
    )
  )
    return 'rows';
  return null;
}

export function profileOf(header: Header, dataRows: readonly Rec[]): Profile {
  const width = header.raw.length;
  const numericColumns = new Set<number>();
  const rows = dataRows.slice(0, PROFILE_SAMPLE);
  for (let j = 0; j < width; j++) {
    let values = 0;
    let numbers = 0;
    for (const r of rows) {
      const v = (r.cells[j] ?? '').trim();
      if (v === '') continue;
      values++;
      if (numberBody(v) !== null && cellKind(v) === 'number') numbers++;
    }
    if (values > 0 && numbers >= 0.8 * values) numericColumns.add(j);
  }
  const counts = rows.map((r) => filled(r.cells).length).sort((a, b) => a - b);
  const medianFilled = counts.length > 0 ? counts[Math.floor(counts.length / 2)]! : width;
  const columnOf = new Map<string, number>();
  header.raw.forEach((name, j) => {
    const key = normalizeHeaderCell(name);
    if (key !== '' && !columnOf.has(key)) columnOf.set(key, j);
  });
  return { header, width, numericColumns, medianFilled, columnOf };
}

export function isRepeatedHeader(cells: readonly string[], header: Header): boolean {
  for (let j = 0; j < Math.max(cells.length, header.raw.length); j++) {
    if ((cells[j] ?? '').trim() !== (header.raw[j] ?? '')) return false;
  }
  return true;
}

export function kindOf(cells: readonly string[], p: Profile): Kind {
  const f = filled(cells);
  if (f.length === 0) return 'blank';
  if (isRepeatedHeader(cells, p.header)) return 'repeated_header';
  const sparse = f.length <= Math.max(3, Math.floor(p.width / 2));
  // a total row may repeat the rows' currency code (`Total,,8,4.00,EUR`): in a narrow table that
  // makes it as full as a data row, but nothing in it besides the label is more than a figure
  if (
    isTotalLabel(f[0]!.text) &&
    (sparse || f.slice(1).every((c) => footerNumber(c.text) || isCode(c.text)))
  )
    return 'total';
  const numbers = f.filter((c) => cellKind(c.text) === 'number').length;
  if (
    numbers > 0 &&
    numbers <= Math.max(2, Math.floor(p.width / 4)) &&
    f.every((c) => cellKind(c.text) === 'number' || isCode(c.text))
  )
    return 'number_only';
  if (isSummaryHeader(f, p)) return 'summary_header';
  // a line of words without a figure (`Generated on 2024-04-01`, `Currency,EUR`, `* amounts in EUR`):
  // below the totals it is the trailer's, anywhere else a data row (see trailerStart)
  if (
    f.length <= Math.max(2, Math.floor(p.width / 4)) &&
    f.every((c) => cellKind(c.text) !== 'number')
  )
    return 'note';
  return 'data';
}

/** A name a header may give a column: a known one, or one with a header keyword. */
function isColumnName(text: string): boolean {
  return isKnownHeader(text) || hasHeaderKeyword(text);
}

/** Whether the filled cells of a row read as the header of a summary table under the detail. */
function isSummaryHeader(f: readonly Filled[], p: Profile): boolean {
  if (f.length < 2 || p.numericColumns.size === 0) return false;
  return isShorterSummaryHeader(f, p) || isNarrowerTableHeader(f, p) || isAsWideTableHeader(f, p);
}

/**
 * A row well short of the detail's rows: mostly words, words in most of the detail's number
 * columns it fills, and at least two of them column names.
 */
function isShorterSummaryHeader(f: readonly Filled[], p: Profile): boolean {
  if (f.length >= 0.8 * p.medianFilled) return false;
  const text = f.filter((c) => cellKind(c.text) === 'text').length;
  const atNumeric = f.filter((c) => p.numericColumns.has(c.index));
  const textAtNumeric = atNumeric.filter((c) => cellKind(c.text) === 'text').length;
  const named = f.filter((c) => isColumnName(c.text)).length;
  return (
    text >= 0.75 * f.length &&
    atNumeric.length > 0 &&
    textAtNumeric * 2 >= atNumeric.length &&
    named >= 2
  );
}

/**
 * A narrower table set from the first column (`Country,Units,Net` under the detail's
 * `Period,Title,Currency,Units,Net`): words only, at least two of them the detail's own column
 * names each in another column than its own (no data row repeats two column names, moved).
 */
function isNarrowerTableHeader(f: readonly Filled[], p: Profile): boolean {
  if (f.length >= p.medianFilled || !f.every((c) => cellKind(c.text) === 'text')) return false;
  let moved = 0;
  let named = 0;
  for (const c of f) {
    const own = p.columnOf.get(normalizeHeaderCell(c.text));
    if (own !== undefined && own !== c.index) moved++;
    if (isColumnName(c.text)) named++;
  }
  return moved >= 2 && named >= f.length - 1;
}

/**
 * A table as wide as the detail (`Store,Country,Currency,Units,Net` under
 * `Period,Title,Currency,Units,Net`): words only, column names where the detail has its figures
 * (every one of its number columns), other names than the detail's in at least two columns (the
 * header written again with a name changed is still this table's), all but one of them names.
 */
function isAsWideTableHeader(f: readonly Filled[], p: Profile): boolean {
  if (f.length < p.medianFilled || !f.every((c) => cellKind(c.text) === 'text')) return false;
  const at = new Map(f.map((c) => [c.index, c.text]));
  const namesFigures = [...p.numericColumns].every((j) => {
    const text = at.get(j);
    return text !== undefined && isColumnName(text);
  });
  const other = f.filter(
    (c) => normalizeHeaderCell(c.text) !== normalizeHeaderCell(p.header.raw[c.index] ?? ''),
  ).length;
  const named = f.filter((c) => isColumnName(c.text)).length;
  return namesFigures && other >= 2 && named >= f.length - 1;
}

/**
 * Index of the first record of the trailer in `kinds` (kinds.length when there is none): a
 * summary table from its header on, with the totals and blank lines just above it, or else the
 * run of totals, number-only rows and blank lines closing the segment, with the notes below them.
 */
export function trailerStart(kinds: readonly Kind[]): number {
  const closing = (k: Kind) =>
    k === 'blank' ||
    k === 'total' ||
    k === 'number_only' ||
    k === 'repeated_header' ||
    k === 'note';
  let start = kinds.indexOf('summary_header');
  if (start < 0) start = kinds.length;
  while (start > 0 && closing(kinds[start - 1]!)) start--;
  // notes belong to the trailer only below its first total: a line of words above them is a data row
  while (start < kinds.length && (kinds[start] === 'note' || kinds[start] === 'blank')) start++;
  // a trailer of nothing but blank lines and repeated headers is no trailer
  let content = false;
  for (let i = start; i < kinds.length; i++)
    if (
      kinds[i] === 'total' ||
      kinds[i] === 'number_only' ||
      kinds[i] === 'summary_header' ||
      kinds[i] === 'data'
    )
      content = true;
  if (!content) return kinds.length;
  return start;
}

export function interleavedTotal(
  records: readonly Rec[],
  kinds: readonly Kind[],
  end: number,
): void {
  for (let i = 0; i < end; i++) {
    if (kinds[i] === 'total') {
      throw new FileError(
        'FILE_INTERLEAVED_TOTALS',
        `Line ${records[i]!.line + 1} is a total or subtotal row between detail rows ("${filled(records[i]!.cells)[0]!.text.slice(0, 40)}"); this layout (blocks closed by subtotals) cannot be read without double counting.`,
      );
    }
  }
}

export function removedReason(kind: Kind, inTrailer: boolean): RemovedReason | null {
  if (kind === 'blank') return 'blank';
  if (kind === 'repeated_header') return 'repeated_header';
  if (!inTrailer) return null;
  if (kind === 'total' || kind === 'number_only' || kind === 'note') return 'footer';
  return 'summary';
}

const isCode = (s: string) => /^[A-Z]{3}$/.test(s);

/** A number in a footer row: a number, or one with a currency code before or after it (`32.68 AUD`). */
function footerNumber(text: string): boolean {
  if (cellKind(text) === 'number') return true;
  if (text.length < 5 || text.length > 80) return false;
  let rest: string | null = null;
  if (isCode(text.slice(0, 3)) && !/[A-Za-z]/.test(text[3]!)) rest = text.slice(3).trim();
  else if (isCode(text.slice(-3)) && !/[A-Za-z]/.test(text[text.length - 4]!))
    rest = text.slice(0, -3).trim();
  return rest !== null && rest !== '' && cellKind(rest) === 'number';
}

/**
 * A footer row as the statement's own figures: its label, its numbers under the header of their
 * column, whether it is a total of the rows or a balance line, and for a labelled total
 * (`Total_Amount<tab>206.89`, `Total_Rows:18`) what the label says it counts and the one value it
 * gives, wherever that value sits.
 */
export function footerTotal(
  cells: readonly string[],
  kind: Kind,
  names: readonly string[],
): FooterTotal {
  const f = filled(cells);
  const values: Record<string, string> = Object.create(null);
  let label = kind === 'total' ? f[0]!.text : '';
  const numbers: string[] = [];
  for (const c of kind === 'total' ? f.slice(1) : f) {
    if (!footerNumber(c.text)) continue;
    numbers.push(c.text);
    const key = names[c.index] || `column ${c.index + 1}`;
    if (!Object.hasOwn(values, key)) values[key] = c.text;
  }
  // older Apple reports: `Total_Amount:32.68` in one cell
  const colon = label.indexOf(':');
  if (colon > 0 && numbers.length === 0) {
    const inline = label.slice(colon + 1).trim();
    if (inline !== '' && footerNumber(inline)) {
      label = label.slice(0, colon).trim();
      numbers.push(inline);
    }
  }
  const total: FooterTotal = {
    label,
    values,
    kind: label !== '' && isBalanceLabel(label) ? 'balance' : 'total',
  };
  if (label !== '' && numbers.length === 1) {
    total.value = numbers[0]!;
    const measure = total.kind === 'total' ? measureOfLabel(label) : null;
    if (measure) total.measure = measure;
  }
  return total;
}

/**
 * How likely a table is the statement's detail, to choose among sheets and archive members:
 * detail tables are long and wide and name their columns as statements do; summaries are short
 * and narrow even when every one of their few names is known.
 */
export function headerScoreForChoice(
  choice: HeaderChoice,
  dataRecords: number,
  width: number,
): number {
  const value =
    4 * Math.log10(dataRecords + 1) +
    Math.min(width, 40) / 5 +
    3 * choice.vocabShare +
    choice.score / 2;
  return Math.round(value * 1000) / 1000;
}
