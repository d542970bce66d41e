// Counts records of a delimited file without parsing cells: a byte-level state machine that
// knows quoting (RFC 4180, lenient about quotes inside unquoted fields as csv-parse's
// relax_quotes is), so a 1,000,000-row statement is counted in well under a second and never
// split into cells in JavaScript. Per record it only notes whether the record is blank (nothing
// but delimiters, spaces and quotes) and whether its bytes equal the header line's.
import { FileError, formatBytes } from './limits.ts';

export interface ScannedRecord {
  /** byte offset of the record's first byte */
  start: number;
  /** byte offset just past its line break (or the end of the data) */
  end: number;
  /** 0-based physical line where it starts */
  line: number;
  blank: boolean;
  headerEqual: boolean;
}

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const SPACE = 0x20;
const TAB = 0x09;

const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
const QUOTE_IN_QUOTED = 3;

export class RecordScanner {
  private state = FIELD_START;
  private offset: number;
  private line: number;
  private recordStart: number;
  private recordLine: number;
  private content = false;
  private prev: { buf: Buffer; start: number } | null = null;
  records = 0;

  constructor(
    private readonly opts: {
      delimiter: number;
      quote: boolean;
      maxRecordBytes: number;
      header?: Buffer;
      baseOffset?: number;
      baseLine?: number;
      onRecord: (r: ScannedRecord) => void;
    },
  ) {
    this.offset = opts.baseOffset ?? 0;
    this.line = opts.baseLine ?? 0;
    this.recordStart = this.offset;
    this.recordLine = this.line;
  }

  /** Byte offset where the record being read started (the end of the last complete one). */
  get boundary(): number {
    return this.recordStart;
  }

  get boundaryLine(): number {
    return this.recordLine;
  }

  /** Lines read so far (from baseLine): after finish(), the data's lines, a last one without its line break included. */
  get lines(): number {
    return this.line;
  }

  push(buf: Buffer): void {
    // most chunks hold no quote at all: then records end at line breaks, found natively
    if (
      (this.state === FIELD_START || this.state === UNQUOTED) &&
      (!this.opts.quote || buf.indexOf(QUOTE) === -1)
    ) {
      this.pushUnquoted(buf);
      return;
    }
    const { delimiter, quote, maxRecordBytes } = this.opts;
    const base = this.offset;
    let state = this.state;
    let content = this.content;
    for (let i = 0; i < buf.length; i++) {
      const b = buf[i]!;
      switch (state) {
        case FIELD_START:
          if (b === LF) {
            this.emit(buf, base, base + i + 1, content);
            content = false;
            continue;
          }
          if (b === QUOTE && quote) state = QUOTED;
          else if (b === delimiter) state = FIELD_START;
          else {
            state = UNQUOTED;
            if (b !== SPACE && b !== TAB && b !== CR) content = true;
          }
          break;
        case UNQUOTED:
          if (b === LF) {
            this.emit(buf, base, base + i + 1, content);
            content = false;
            state = FIELD_START;
            continue;
          }
          if (b === delimiter) state = FIELD_START;
          else if (b !== SPACE && b !== TAB && b !== CR && !(b === QUOTE && quote)) content = true;
          break;
        case QUOTED:
          if (b === QUOTE) state = QUOTE_IN_QUOTED;
          else {
            if (b === LF) this.line++;
            if (b !== SPACE && b !== TAB && b !== CR && b !== LF) content = true;
          }
          break;
        default:
          // just after a quote inside a quoted field
          if (b === QUOTE) {
            state = QUOTED;
            content = true;
          } else if (b === delimiter) state = FIELD_START;
          else if (b === LF) {
            this.emit(buf, base, base + i + 1, content);
            content = false;
            state = FIELD_START;
            continue;
          } else if (b !== CR) {
            state = UNQUOTED;
            if (b !== SPACE && b !== TAB) content = true;
          }
      }
      if (base + i - this.recordStart >= maxRecordBytes) {
        throw new FileError(
          'FIELD_TOO_LARGE',
          `The record starting at line ${this.recordLine + 1} is longer than ${formatBytes(maxRecordBytes)} (a field that never ends, or a file without line breaks); it is not a statement table.`,
        );
      }
    }
    this.state = state;
    this.content = content;
    this.offset = base + buf.length;
    this.prev = { buf, start: base };
  }

  private hasContent(buf: Buffer, from: number, to: number): boolean {
    const d = this.opts.delimiter;
    for (let i = from; i < to; i++) {
      const b = buf[i]!;
      if (b !== d && b !== SPACE && b !== TAB && b !== CR && b !== QUOTE) return true;
    }
    return false;
  }

  private tooLong(): FileError {
    return new FileError(
      'FIELD_TOO_LARGE',
      `The record starting at line ${this.recordLine + 1} is longer than ${formatBytes(this.opts.maxRecordBytes)} (a field that never ends, or a file without line breaks); it is not a statement table.`,
    );
  }

  private pushUnquoted(buf: Buffer): void {
    const base = this.offset;
    let content = this.content;
    let pos = 0;
    for (let nl = buf.indexOf(LF, pos); nl !== -1; nl = buf.indexOf(LF, pos)) {
      if (base + nl - this.recordStart >= this.opts.maxRecordBytes) throw this.tooLong();
      content = content || this.hasContent(buf, pos, nl);
      this.emit(buf, base, base + nl + 1, content);
      content = false;
      pos = nl + 1;
    }
    if (pos < buf.length) {
      if (base + buf.length - this.recordStart >= this.opts.maxRecordBytes) throw this.tooLong();
      content = content || this.hasContent(buf, pos, buf.length);
      this.state = buf[buf.length - 1] === this.opts.delimiter ? FIELD_START : UNQUOTED;
    } else {
      this.state = FIELD_START;
    }
    this.content = content;
    this.offset = base + buf.length;
    this.prev = { buf, start: base };
  }

  /** Emits the last record when the data does not end with a line break. */
  finish(): void {
    if (this.offset > this.recordStart) {
      const last = this.prev;
      this.emitRange(last, this.offset, this.content);
    }
  }

  private emit(buf: Buffer, base: number, end: number, content: boolean): void {
    this.emitRange({ buf, start: base }, end, content, true);
  }

  /** The byte at an absolute offset, from the current chunk or the one before it. */
  private byteAt(
    pos: number,
    cur: { buf: Buffer; start: number } | null,
    current: boolean,
  ): number | undefined {
    if (cur && pos >= cur.start) return cur.buf[pos - cur.start];
    const p = current ? this.prev : null;
    if (p && pos >= p.start) return p.buf[pos - p.start];
    return undefined;
  }

  // no closure is made per record: under tsx every function expression is wrapped in a naming
  // helper (Object.defineProperty), which cost more than the scan itself at a million records
  private emitRange(
    cur: { buf: Buffer; start: number } | null,
    end: number,
    content: boolean,
    current = false,
  ): void {
    const header = this.opts.header;
    let headerEqual = false;
    if (header && content) {
      // bytes of the record without its line break
      let stop = end;
      if (this.byteAt(stop - 1, cur, current) === LF) stop--;
      if (this.byteAt(stop - 1, cur, current) === CR) stop--;
      if (stop - this.recordStart === header.length) {
        headerEqual = true;
        for (let k = 0; k < header.length; k++) {
          if (this.byteAt(this.recordStart + k, cur, current) !== header[k]) {
            headerEqual = false;
            break;
          }
        }
      }
    }
    this.opts.onRecord({
      start: this.recordStart,
      end,
      line: this.recordLine,
      blank: !content,
      headerEqual,
    });
    this.records++;
    this.line++;
    this.recordStart = end;
    this.recordLine = this.line;
  }
}
