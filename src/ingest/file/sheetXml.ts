// The shared strings, worksheets and styles of an .xlsx read with a streaming XML parser (saxes)
// rather than exceljs's streaming WorksheetReader (ingestion's first reader), which loses cell text:
// an inline string of several runs keeps its last run, the phonetic reading Excel stores with
// Japanese text (`<rPh>`) replaces the text, a formula's cached TRUE reads 1 and its `#N/A` reads
// empty, a `t="d"` cell (ISO 8601 date) reads as its year, text is decoded twice (`&amp;lt;3` reads
// `<3`), a UTF-8 character split between two inflated chunks becomes two U+FFFD, whitespace
// between the parts of a pretty-printed shared string is kept, cells and rows without an `r`
// attribute (the format allows them) fail the file, and elements with a namespace prefix
// (`<x:row>`, as the Open XML SDK writes them) are not seen at all.
import type { Readable } from 'node:stream';
import { SaxesParser } from 'saxes';
import { FileError } from './limits.ts';

const ESCAPE = /_x([0-9A-Fa-f]{4})_/g;

/**
 * The text of a string element as Excel shows it (ECMA-376 Part 1, 22.4.2.4 ST_Xstring): `_xHHHH_`
 * is the character U+HHHH that XML cannot hold (`_x000D_` a carriage return, `_x0009_` a tab),
 * read left to right in one pass, so `_x005F_` is an underscore and `_x005F_x000D_` the text
 * `_x000D_`. NUL is then removed, as from text and .xls cells (PostgreSQL stores none), and so is
 * U+FEFF, which Excel shows as nothing.
 */
export function xstring(text: string): string {
  let s = text.includes('_x')
    ? text.replace(ESCAPE, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    : text;
  if (s.includes('\0')) s = s.replaceAll('\0', '');
  if (s.includes('\uFEFF')) s = s.replaceAll('\uFEFF', '');
  return s;
}

/** Excel's last row and column: a reference beyond them is no cell of a real sheet. */
export const MAX_ROWS = 1_048_576;
export const MAX_COLUMNS = 16_384;

const local = (name: string) => {
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
};

interface Handlers {
  open(name: string, attributes: Record<string, string>): void;
  close(name: string): void;
  text(text: string): void;
}

/**
 * Feeds a part to the handlers, chunk by chunk: the bytes decoded as one UTF-8 stream (a character
 * split between two chunks stays whole); yields after each chunk, so the caller can hand over what
 * the handlers collected.
 */
async function* parseXml(stream: Readable, part: string, h: Handlers): AsyncGenerator<void> {
  const parser = new SaxesParser({ xmlns: false });
  let failure: Error | null = null;
  parser.on('opentag', (tag) => h.open(local(tag.name), tag.attributes as Record<string, string>));
  parser.on('closetag', (tag) => h.close(local(tag.name)));
  parser.on('text', (text) => h.text(text));
  parser.on('cdata', (text) => h.text(text));
  parser.on('error', (error) => {
    failure ??= error;
  });
  const decoder = new TextDecoder('utf-8');
  const fail = () =>
    new FileError(
      'FILE_DAMAGED',
      `The workbook is damaged: its part "${part}" is not well-formed XML (${String(failure?.message ?? '').slice(0, 120)}).`,
    );
  for await (const chunk of stream) {
    parser.write(decoder.decode(chunk as Buffer, { stream: true }));
    if (failure) throw fail();
    yield;
  }
  parser.write(decoder.decode());
  parser.close();
  if (failure) throw fail();
  yield;
}

/**
 * The shared strings: each `<si>` as the text of its `<t>` elements (a plain string or rich-text
 * runs), never its phonetic readings (`<rPh>`) nor the whitespace between elements.
 */
export async function readSharedStrings(
  stream: Readable,
  maxFieldBytes: number,
): Promise<string[]> {
  const out: string[] = [];
  let inSi = false;
  let inT = false;
  let phonetic = 0;
  let text = '';
  // the `<t>` being read: each is decoded on its own (an escape never spans two runs)
  let run = '';
  const handlers: Handlers = {
    open(name) {
      if (name === 'si') {
        inSi = true;
        text = '';
      } else if (name === 'rPh') phonetic++;
      else if (name === 't' && inSi && phonetic === 0) {
        inT = true;
        run = '';
      }
    },
    close(name) {
      if (name === 'si') {
        out.push(text);
        inSi = false;
      } else if (name === 'rPh') phonetic = Math.max(0, phonetic - 1);
      else if (name === 't' && inT) {
        text += xstring(run);
        run = '';
        inT = false;
      }
    },
    text(t) {
      if (!inT) return;
      run += t;
      if (text.length + run.length > maxFieldBytes)
        throw new FileError(
          'FIELD_TOO_LARGE',
          `Shared string ${out.length + 1} of the workbook is longer than the accepted maximum.`,
        );
    },
  };
  for await (const _ of parseXml(stream, 'xl/sharedStrings.xml', handlers));
  return out;
}

/**
 * Excel's built-in number formats (ECMA-376 Part 1, 18.8.30), the ones that hold in every locale:
 * a style naming one of these ids has no `<numFmt>` of its own. The ids Excel reads by the
 * locale (27-36, 50-58) are not here: their format is unknown to the file.
 */
const BUILT_IN_FORMATS: Record<number, string> = {
  1: '0',
  2: '0.00',
  3: '#,##0',
  4: '#,##0.00',
  9: '0%',
  10: '0.00%',
  11: '0.00E+00',
  12: '# ?/?',
  13: '# ??/??',
  14: 'mm-dd-yy',
  15: 'd-mmm-yy',
  16: 'd-mmm',
  17: 'mmm-yy',
  18: 'h:mm AM/PM',
  19: 'h:mm:ss AM/PM',
  20: 'h:mm',
  21: 'h:mm:ss',
  22: 'm/d/yy h:mm',
  37: '#,##0 ;(#,##0)',
  38: '#,##0 ;[Red](#,##0)',
  39: '#,##0.00 ;(#,##0.00)',
  40: '#,##0.00 ;[Red](#,##0.00)',
  45: 'mm:ss',
  46: '[h]:mm:ss',
  47: 'mmss.0',
  48: '##0.0E+0',
  49: '@',
};

/**
 * The number format of each cell style (`s` of a cell: its position in `<cellXfs>`), from
 * xl/styles.xml: the workbook's own `<numFmt>` of that id, else Excel's built-in one; undefined
 * for General and for an id the file does not define.
 */
export async function readNumberFormats(
  stream: Readable,
): Promise<(style: number) => string | undefined> {
  const custom = new Map<number, string>();
  const styleFormats: number[] = [];
  let inCellXfs = false;
  const handlers: Handlers = {
    open(name, attributes) {
      if (
        name === 'numFmt' &&
        attributes.numFmtId !== undefined &&
        attributes.formatCode !== undefined
      ) {
        custom.set(Number.parseInt(attributes.numFmtId, 10), attributes.formatCode);
      } else if (name === 'cellXfs') inCellXfs = true;
      else if (name === 'xf' && inCellXfs)
        styleFormats.push(Number.parseInt(attributes.numFmtId ?? '0', 10));
    },
    close(name) {
      if (name === 'cellXfs') inCellXfs = false;
    },
    text() {},
  };
  for await (const _ of parseXml(stream, 'xl/styles.xml', handlers));
  return (style) => {
    const id = styleFormats[style];
    if (id === undefined || !id) return undefined;
    return custom.get(id) ?? BUILT_IN_FORMATS[id];
  };
}

/** A cell as the worksheet stores it, before its value is read. */
export interface RawCell {
  /** 0-based column */
  column: number;
  /** the `t` attribute: s, str, inlineStr, b, e, d, n (the default) */
  type: string;
  style: number;
  /** the text of `<v>`, null when absent */
  value: string | null;
  /** the text of `<is>` (its `<t>` elements, runs joined, phonetic readings left out), `_xHHHH_` decoded */
  inline: string | null;
  formula: boolean;
}

export interface RawRow {
  /** 1-based row number */
  number: number;
  hidden: boolean;
  cells: RawCell[];
}

export interface SheetExtras {
  /** the merged ranges (`A1:C1`), which a worksheet lists after its rows */
  merges: string[];
}

/** `B7` as [1-based row, 0-based column]; null when no reference. */
export function decodeRef(ref: string): [number, number] | null {
  const m = /^\$?([A-Za-z]{1,3})\$?(\d{1,7})$/.exec(ref);
  if (!m) return null;
  let column = 0;
  for (const ch of m[1]!.toUpperCase()) column = column * 26 + (ch.charCodeAt(0) - 64);
  return [Number(m[2]), column - 1];
}

/**
 * The rows of a worksheet as they come: cells without an `r` attribute follow the cell before
 * them, rows without one the row before them. A reference beyond Excel's last row or column is a
 * damaged sheet (a sparse cell at column 10 million would otherwise make a row of that width).
 */
export async function* readWorksheet(
  stream: Readable,
  part: string,
  extras: SheetExtras,
): AsyncGenerator<RawRow[]> {
  const reader = new WorksheetReader(part, extras);
  for await (const _ of parseXml(stream, part, reader)) {
    if (reader.rows.length === 0) continue;
    const done = reader.rows;
    reader.rows = [];
    yield done;
  }
}

/** The parser's handlers for one worksheet: where it is in the XML, and the rows read so far. */
class WorksheetReader implements Handlers {
  /** the rows read and not yet handed on */
  rows: RawRow[] = [];
  private row: RawRow | null = null;
  private lastRow = 0;
  private cell: RawCell | null = null;
  private nextColumn = 0;
  private capture: 'v' | 't' | null = null;
  private run = '';
  private inInline = false;
  private phonetic = 0;
  private inSheetData = false;

  constructor(
    private readonly part: string,
    private readonly extras: SheetExtras,
  ) {}

  private damaged(what: string): FileError {
    return new FileError(
      'FILE_DAMAGED',
      `The workbook is damaged: sheet part "${this.part}" has ${what}.`,
    );
  }

  text(text: string): void {
    if (!this.cell || this.capture === null) return;
    if (this.capture === 'v') this.cell.value = (this.cell.value ?? '') + text;
    else this.run += text;
  }

  open(name: string, a: Record<string, string>): void {
    switch (name) {
      case 'sheetData':
        this.inSheetData = true;
        break;
      case 'row':
        if (this.inSheetData) this.openRow(a);
        break;
      case 'c':
        if (this.row) this.openCell(a);
        break;
      case 'v':
        if (this.cell) this.capture = 'v';
        break;
      case 'f':
        if (this.cell) this.cell.formula = true;
        break;
      case 'is':
        if (this.cell) {
          this.inInline = true;
          this.cell.inline = '';
        }
        break;
      case 'rPh':
        this.phonetic++;
        break;
      case 't':
        if (this.cell && this.inInline && this.phonetic === 0) {
          this.capture = 't';
          this.run = '';
        }
        break;
      case 'mergeCell':
        if (a.ref !== undefined && this.extras.merges.length < 10_000)
          this.extras.merges.push(a.ref);
        break;
    }
  }

  private openRow(a: Record<string, string>): void {
    const number = a.r !== undefined ? Number(a.r) : this.lastRow + 1;
    if (!Number.isInteger(number) || number < 1 || number > MAX_ROWS)
      throw this.damaged(`a row numbered "${String(a.r).slice(0, 20)}"`);
    this.row = { number, hidden: a.hidden === '1' || a.hidden === 'true', cells: [] };
    this.nextColumn = 0;
  }

  private openCell(a: Record<string, string>): void {
    let column = this.nextColumn;
    if (a.r !== undefined) {
      const ref = decodeRef(a.r);
      if (!ref) throw this.damaged(`a cell reference "${a.r.slice(0, 20)}"`);
      column = ref[1];
    }
    if (column >= MAX_COLUMNS)
      throw this.damaged(`a cell beyond Excel's last column (${String(a.r).slice(0, 20)})`);
    this.cell = {
      column,
      type: a.t ?? 'n',
      style: a.s !== undefined ? Number.parseInt(a.s, 10) || 0 : 0,
      value: null,
      inline: null,
      formula: false,
    };
  }

  close(name: string): void {
    const cell = this.cell;
    switch (name) {
      case 'v':
        // a formula's cached text is an ST_Xstring too
        if (cell && this.capture === 'v' && cell.type === 'str' && cell.value !== null)
          cell.value = xstring(cell.value);
        this.capture = null;
        break;
      case 't':
        if (cell && this.capture === 't') cell.inline = (cell.inline ?? '') + xstring(this.run);
        this.run = '';
        this.capture = null;
        break;
      case 'is':
        this.inInline = false;
        break;
      case 'rPh':
        this.phonetic = Math.max(0, this.phonetic - 1);
        break;
      case 'c':
        if (this.row && cell) {
          this.row.cells.push(cell);
          this.nextColumn = cell.column + 1;
        }
        this.cell = null;
        this.capture = null;
        break;
      case 'row':
        if (this.row) {
          this.rows.push(this.row);
          this.lastRow = this.row.number;
        }
        this.row = null;
        break;
      case 'sheetData':
        this.inSheetData = false;
        break;
    }
  }
}
