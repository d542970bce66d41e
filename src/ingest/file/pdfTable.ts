// A PDF's text lines (pdf.ts) as the rows of one table, ready to be written as CSV and located
// like any text file (delimited.ts): columns from where the text sits, page margins kept out,
// and subtotals between the detail rows checked against the rows they close and kept out too.
//
// Columns: the table's lines (those with about as many segments as most lines have) cover the
// page's width in runs separated by gaps no line writes into; each run is a column, and every
// segment of every line goes to the column it starts in (its widest overlap when it starts in a
// gap). Right-aligned figures and left-aligned headers share a run, so both land in one column.
import { addDecimals, compareDecimals } from '../../decimal.ts';
import type { RemovedReason, RemovedRow } from '../fileTypes.ts';
import { cellKind, decideDecimalComma, numberBody } from './cells.ts';
import { FileError } from './limits.ts';
import type { PdfLine, Segment } from './pdf.ts';
import {
  buildHeader,
  filled,
  findHeader,
  isBalanceLabel,
  kindOf,
  profileOf,
  type Rec,
  trailerStart,
} from './table.ts';

interface PdfRows {
  /** the table's rows as cells, in reading order; [] marks a wide vertical gap (a blank line) */
  rows: string[][];
  /** lines kept out of `rows`: page headers and footers, subtotals between detail rows (line -1: not in the CSV) */
  removed: RemovedRow[];
}

/** A gap between lines wider than this many times the usual line spacing is a blank line. */
const BLANK_GAP = 1.8;
/** Share of the table's lines that may write into a gap between two columns (an overlong title). */
const GAP_NOISE = 0.02;
/** The top and bottom of a page, as shares of its height, where page headers and footers sit. */
const MARGIN_BAND = 0.2;

const PAGE_NUMBER =
  /^(?:page|seite|pagina|página|pag\.?|p\.)\s*\d+(?:\s*(?:of|von|de|di|sur|\/)\s*\d+)?$|^\d+\s*(?:of|\/)\s*\d+$|^-\s*\d+\s*-$/i;
const PAGE_NUMBER_IN =
  /\b(?:page|seite|pagina|página)\s*\d+(?:\s*(?:of|von|de|di|sur|\/)\s*\d+)?\b/i;
const SUBTOTAL =
  /^(?:sub[- ]?totals?|work totals?|totals? (?:for|of) (?:the )?(?:work|title|song|page)|page totals?|totals? page|intermediate totals?|zwischensumme|sous[- ]total|subtotale)\b/i;

export function pdfRows(lines: readonly PdfLine[]): PdfRows {
  const tableWidth = tableSegments(lines);
  const columns = columnsOf(lines.filter((l) => l.segments.length >= tableWidth));
  const margin = marginLines(lines, tableWidth);
  const removed: RemovedRow[] = [];
  const rows: string[][] = [];
  const spacing = lineSpacing(lines);
  let previous: PdfLine | null = null;
  for (const line of lines) {
    const cells = cellsOf(line.segments, columns);
    if (margin.has(line)) {
      removed.push({ line: -1, reason: 'page_margin', cells });
      continue;
    }
    if (previous && previous.page === line.page && line.top - previous.top > BLANK_GAP * spacing)
      rows.push([]);
    rows.push(cells);
    previous = line;
  }
  return dropSubtotals(rows, removed);
}

/** The segments a table line has at least: 60% of the most common count among lines of two or more. */
function tableSegments(lines: readonly PdfLine[]): number {
  const counts = new Map<number, number>();
  for (const l of lines)
    if (l.segments.length >= 2)
      counts.set(l.segments.length, (counts.get(l.segments.length) ?? 0) + 1);
  let modal = 2;
  let seen = 0;
  for (const [n, c] of counts) {
    if (c > seen || (c === seen && n > modal)) {
      modal = n;
      seen = c;
    }
  }
  return Math.max(2, Math.ceil(0.6 * modal));
}

interface Column {
  x0: number;
  x1: number;
}

/** Runs of the page's width that the table's lines write into, left to right. */
function columnsOf(tableLines: readonly PdfLine[]): Column[] {
  let right = 0;
  for (const l of tableLines)
    for (const s of l.segments) right = Math.max(right, Math.ceil(s.x1) + 1);
  if (tableLines.length === 0 || right <= 0 || right > 100_000)
    return [{ x0: -Infinity, x1: Infinity }];
  const delta = new Int32Array(right + 2);
  for (const l of tableLines) {
    for (const s of l.segments) {
      const from = Math.max(0, Math.floor(s.x0));
      delta[from]!++;
      delta[Math.max(from + 1, Math.ceil(s.x1))]!--;
    }
  }
  const noise = Math.floor(GAP_NOISE * tableLines.length);
  const columns: Column[] = [];
  let depth = 0;
  let start = -1;
  for (let x = 0; x <= right + 1; x++) {
    depth += delta[x]!;
    if (depth > noise && start < 0) start = x;
    else if (depth <= noise && start >= 0) {
      columns.push({ x0: start, x1: x });
      start = -1;
    }
  }
  return columns.length > 0 ? columns : [{ x0: -Infinity, x1: Infinity }];
}

/** A line's segments placed in the columns: by where each starts, else by the column edge nearest to its start. */
function cellsOf(segments: readonly Segment[], columns: readonly Column[]): string[] {
  const cells = columns.map(() => '');
  for (const s of segments) {
    let at = columns.findIndex((c) => s.x0 >= c.x0 - 0.5 && s.x0 < c.x1);
    if (at < 0) {
      // a segment starting in a gap (a title wider than its column, a label over two columns): the nearest column edge
      let distance = Infinity;
      columns.forEach((c, i) => {
        const d = Math.min(Math.abs(s.x0 - c.x0), Math.abs(s.x0 - c.x1));
        if (d < distance) {
          distance = d;
          at = i;
        }
      });
    }
    cells[at] = cells[at] === '' ? s.text : `${cells[at]} ${s.text}`;
  }
  return cells;
}

/** The usual distance between consecutive lines of a page (their median). */
function lineSpacing(lines: readonly PdfLine[]): number {
  const gaps: number[] = [];
  for (let i = 1; i < lines.length; i++)
    if (lines[i]!.page === lines[i - 1]!.page) gaps.push(lines[i]!.top - lines[i - 1]!.top);
  gaps.sort((a, b) => a - b);
  return gaps.length > 0 ? Math.max(gaps[Math.floor(gaps.length / 2)]!, 1) : 12;
}

/**
 * Page headers and footers, in a page's top or bottom band: a page number (`Page 2 of 5`, `3/7`,
 * alone or within a line), and a line that is no table line and that another page writes
 * at the same height with the same words (numbers aside): the member box every page repeats, a
 * printed-on date. The first page's top lines stay: they are the statement's preamble.
 */
function marginLines(lines: readonly PdfLine[], tableWidth: number): Set<PdfLine> {
  const out = new Set<PdfLine>();
  const candidates = new Map<string, PdfLine[]>();
  for (const line of lines) {
    if (line.segments.length >= tableWidth) continue;
    const top = line.top < MARGIN_BAND * line.pageHeight;
    const inBand = top || line.top > (1 - MARGIN_BAND) * line.pageHeight;
    const numbered =
      inBand &&
      line.segments.some((s) => PAGE_NUMBER.test(s.text.trim()) || PAGE_NUMBER_IN.test(s.text));
    if (numbered) {
      out.add(line);
      continue;
    }
    if (!inBand) continue;
    const key = line.segments
      .map((s) => s.text)
      .join(' ')
      .toLowerCase()
      .replace(/\d+/g, '#');
    const same = candidates.get(key) ?? [];
    same.push(line);
    candidates.set(key, same);
  }
  for (const same of candidates.values()) {
    for (const line of same) {
      const preamble = line.page === 1 && line.top < MARGIN_BAND * line.pageHeight;
      if (!preamble && same.some((o) => o.page !== line.page && Math.abs(o.top - line.top) <= 2))
        out.add(line);
    }
  }
  return out;
}

/**
 * Total rows between the detail rows (a subtotal closing each work, a page total, a carried
 * forward line), and subtotal rows just above the statement's closing totals, are kept out of the
 * table: each total is checked first against the rows it closes (those since the previous one),
 * else against all the rows above it (a running total), in every column it writes a figure in.
 * One that matches neither is refused (FILE_INTERLEAVED_TOTALS): the rows would be double counted
 * or misread. Balance lines (`Carried forward`) are kept out unchecked: they are no sum of rows.
 * Below the detail, a total whose label says nothing (`Total`) closes the last block when blocks
 * were closed before and it is the sum of that block's rows only; the totals after it stay, as the
 * statement's stated totals (LocatedTable.footerTotals).
 */
function dropSubtotals(rows: string[][], removed: RemovedRow[]): PdfRows {
  const records: Rec[] = rows.map((cells, line) => ({ cells, line }));
  const choice = findHeader(records);
  if (!choice) return { rows, removed };
  const header = buildHeader(rows[choice.index]!);
  const body = records.slice(choice.index + 1);
  const profile = profileOf(header, body.filter((r) => filled(r.cells).length > 0).slice(0, 200));
  const kinds = body.map((r) => kindOf(r.cells, profile));
  const trailer = trailerStart(kinds);
  // decimal commas decided over the whole table, as the delimited reader decides them
  const comma = decideDecimalComma(
    header.raw.map((_, j) =>
      body
        .filter((_, i) => kinds[i] === 'data' || kinds[i] === 'total')
        .map((r) => r.cells[j] ?? ''),
    ),
    ',',
  ).map((v) => v === true);
  const figures = { kinds, comma, names: header.names };
  const drop = new Set<number>();
  let blockStart = 0;
  for (let i = 0; i < body.length; i++) {
    if (kinds[i] !== 'total') continue;
    const label = filled(body[i]!.cells)[0]!.text;
    const named = SUBTOTAL.test(label);
    if (isBalanceLabel(label)) {
      if (i >= trailer) continue;
    } else if (i < trailer || named) {
      const why = subtotalMismatch(body, figures, drop, blockStart, i);
      if (why)
        throw new FileError(
          'FILE_INTERLEAVED_TOTALS',
          `The line "${label.slice(0, 40)}" ${why}: the table was not read as printed; download the statement as CSV or Excel.`,
        );
    } else if (
      drop.size === 0 ||
      blockStart === 0 ||
      subtotalMismatch(body, figures, drop, blockStart, i, true) !== null
    ) {
      continue;
    }
    drop.add(i);
    blockStart = i + 1;
  }
  if (drop.size === 0) return { rows, removed };
  const kept: string[][] = rows.slice(0, choice.index + 1);
  body.forEach((r, i) => {
    if (drop.has(i))
      removed.push({ line: -1, reason: 'subtotal' satisfies RemovedReason, cells: r.cells });
    else kept.push(r.cells);
  });
  return { rows: kept, removed };
}

/**
 * Why the total row `at` is not the sum of the data rows it closes (from `from`) nor of all the
 * data rows above it, in some column where it writes a figure; null when it is (in every such
 * column, and in at least one). `blockOnly`: the rows it closes count, a running total does not.
 */
function subtotalMismatch(
  body: readonly Rec[],
  {
    kinds,
    comma,
    names,
  }: { kinds: readonly string[]; comma: readonly boolean[]; names: readonly string[] },
  drop: ReadonlySet<number>,
  from: number,
  at: number,
  blockOnly = false,
): string | null {
  const total = body[at]!.cells;
  const block: string[][] = [];
  const all: string[][] = [];
  for (let i = 0; i < at; i++) {
    if (drop.has(i) || kinds[i] !== 'data') continue;
    all.push(body[i]!.cells);
    if (i >= from) block.push(body[i]!.cells);
  }
  let figures = 0;
  const labelAt = filled(total)[0]!.index;
  for (let j = 0; j < total.length; j++) {
    if (j === labelAt) continue;
    const stated = total[j]!.trim();
    if (stated === '' || cellKind(stated) !== 'number') continue;
    figures++;
    const sum = (rows: string[][]) =>
      rows.reduce(
        (acc, r) => addDecimals(acc, plainDecimal(r[j] ?? '', comma[j] === true) ?? '0'),
        '0',
      );
    const value = plainDecimal(stated, comma[j] === true);
    if (
      value !== null &&
      (compareDecimals(sum(block), value) === 0 ||
        (!blockOnly && compareDecimals(sum(all), value) === 0))
    )
      continue;
    return `states ${stated.slice(0, 30)} under "${(names[j] ?? `column ${j + 1}`).slice(0, 40)}", which is neither the sum of the ${block.length} rows it closes (${sum(block)}) nor of all the rows above it`;
  }
  return figures > 0 ? null : 'states no figure under a column';
}

/** A figure as plain decimal text (`-1234.56`): its sign, parentheses and grouping undone; null when it is no number. */
function plainDecimal(text: string, decimalComma: boolean): string | null {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  const body = numberBody(trimmed);
  if (body === null) return null;
  const negative = /^[-\u2212(]|-$/.test(trimmed) || /^\(.*\)$/.test(trimmed);
  const decimal = decimalComma ? ',' : '.';
  let digits = '';
  for (const ch of body) {
    if (ch >= '0' && ch <= '9') digits += ch;
    else if (ch === decimal) digits += '.';
  }
  if (digits === '' || digits.split('.').length > 2) return null;
  if (digits.startsWith('.')) digits = `0${digits}`;
  if (digits.endsWith('.')) digits = digits.slice(0, -1);
  return negative ? `-${digits}` : digits;
}
