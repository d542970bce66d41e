// Delimited text split into records of cells without csv-parse, for text quoted as RFC 4180 has it
// (a field quoted whole or not at all, a quote inside doubled), which nearly every statement is:
// csv-parse took a third of the time to locate the table of a small file, and its records' lines
// needed a second pass of the byte scanner. Anything else returns null and csv-parse, lenient about
// stray quotes, splits the text as before: a quote inside an unquoted field, text after a closing
// quote, a quote never closed, a line break other than the file's, a record near the size limit.
import type { Rec } from './table.ts';

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
/** a UTF-16 code unit is at most 3 bytes of UTF-8: a record this many times its length may be too long */
const BYTES_PER_UNIT = 3;

export interface SplitOptions {
  delimiter: string;
  /** whether `"` quotes fields (tab files may carry quotes as text) */
  quote: boolean;
  newline: '\n' | '\r\n';
  /** the line of the text's first record */
  baseLine: number;
  /** csv-parse's `max_record_size`: a record that may reach it is left to csv-parse */
  maxRecordBytes: number;
}

/** The text's records and the line each starts on, as csv-parse splits them; null when unsure. */
export function splitRecords(text: string, o: SplitOptions): Rec[] | null {
  const recs: Rec[] = [];
  const crlf = o.newline === '\r\n';
  const n = text.length;
  let line = o.baseLine;
  let nextQuote = o.quote ? text.indexOf('"') : -1;
  let i = 0;
  while (i < n) {
    let lf = text.indexOf('\n', i);
    if (lf < 0) lf = n;
    if (nextQuote >= 0 && nextQuote < i) nextQuote = text.indexOf('"', i);
    if (nextQuote >= i && nextQuote < lf) {
      const r = quotedRecord(text, i, o.delimiter.charCodeAt(0), crlf);
      if (!r || (r.end - i) * BYTES_PER_UNIT > o.maxRecordBytes) return null;
      recs.push({ cells: r.cells, line });
      line += r.breaks;
      i = r.end;
      continue;
    }
    if ((lf - i) * BYTES_PER_UNIT > o.maxRecordBytes) return null;
    // a CRLF file's record ends at CR LF: a bare LF, or a CR elsewhere, csv-parse reads otherwise
    const end = crlf && lf < n ? lf - 1 : lf;
    if (crlf && lf < n && (end < i || text.charCodeAt(end) !== CR)) return null;
    const content = text.slice(i, end);
    if (content.includes('\r')) return null;
    recs.push({ cells: content.split(o.delimiter), line });
    line++;
    i = lf + 1;
  }
  return recs;
}

/**
 * The record from `start` that holds a quote: its cells, where the next record starts and the line
 * breaks passed (inside quoted fields, and its own); null when it is not quoted as RFC 4180 has it.
 */
function quotedRecord(
  text: string,
  start: number,
  delimiter: number,
  crlf: boolean,
): { cells: string[]; end: number; breaks: number } | null {
  const n = text.length;
  const cells: string[] = [];
  let breaks = 0;
  let i = start;
  for (;;) {
    if (text.charCodeAt(i) === QUOTE) {
      const field = quotedField(text, i);
      if (!field) return null;
      cells.push(field.value);
      breaks += field.breaks;
      i = field.end;
    } else {
      let j = i;
      for (; j < n; j++) {
        const c = text.charCodeAt(j);
        if (c === delimiter || c === LF || c === CR || c === QUOTE) break;
      }
      if (text.charCodeAt(j) === QUOTE) return null;
      cells.push(text.slice(i, j));
      i = j;
    }
    if (i >= n) return { cells, end: n, breaks };
    const c = text.charCodeAt(i);
    if (c === delimiter) i++;
    else if (!crlf && c === LF) return { cells, end: i + 1, breaks: breaks + 1 };
    else if (crlf && c === CR && text.charCodeAt(i + 1) === LF)
      return { cells, end: i + 2, breaks: breaks + 1 };
    else return null;
  }
}

/** The quoted field opening at `start`: its value, where it ends (past its closing quote) and its line breaks. */
function quotedField(
  text: string,
  start: number,
): { value: string; end: number; breaks: number } | null {
  let value = '';
  let from = start + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q < 0) return null;
    if (text.charCodeAt(q + 1) === QUOTE) {
      value += text.slice(from, q + 1);
      from = q + 2;
      continue;
    }
    value += text.slice(from, q);
    let breaks = 0;
    for (let k = text.indexOf('\n', start); k >= 0 && k < q; k = text.indexOf('\n', k + 1))
      breaks++;
    return { value, end: q + 1, breaks };
  }
}
