// Bytes to clean UTF-8 text: the encoding is detected (BOMs, the NUL pattern of UTF-16, UTF-8
// validity of the whole file, else the legacy encoding of the lines that are not UTF-8, see
// encoding.ts), or named by the uploader, and a file that is
// already UTF-8 without BOM, NUL, \x1A, lone CR or `sep=` line is used as it is, so a large
// statement is never copied. Anything else is transcoded, streaming, into the work directory; a
// small file, whose bytes the reader read whole (`TextSource`), from those bytes and at once.
import { createReadStream, writeFileSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { isUtf8 } from 'node:buffer';
import iconv from 'iconv-lite';
import { type Deadline, FileError, formatBytes } from './limits.ts';
import { readHead, SUPPORTED } from './sniff.ts';
import { detectLegacyEncoding, SAMPLE_BYTES } from './encoding.ts';

export type Delimiter = ',' | ';' | '\t' | '|';

export interface CleanText {
  /** UTF-8 text without BOM (U+FEFF anywhere), NUL, \x1A, lone CR or `sep=` line */
  path: string;
  encoding: string;
  /** the delimiter named by an Excel `sep=` first line */
  sepDelimiter: Delimiter | null;
  /** the line break used throughout the clean text */
  newline: '\n' | '\r\n';
  /** the legacy encoding was a guess among others nearly as likely (they, the one read first) */
  uncertainEncoding?: { candidates: string[] };
  /** the clean text's bytes, when the file was small enough to be read whole: `path` holds the same */
  bytes?: Buffer;
}

/** A file to read: its path, and its bytes when it was read whole (a small file). */
export interface TextSource {
  path: string;
  bytes?: Buffer | undefined;
}

type Family = 'utf-8' | 'utf-8-bom' | 'utf-16le' | 'utf-16be';

const CHUNK = 4 * 1024 * 1024;

/** The source's bytes in chunks of up to CHUNK: the bytes read already, else streamed from its file. */
async function* chunksOf(source: TextSource): AsyncIterable<Buffer> {
  if (source.bytes) {
    for (let at = 0; at < source.bytes.length; at += CHUNK)
      yield source.bytes.subarray(at, at + CHUNK);
    return;
  }
  for await (const raw of createReadStream(source.path, { highWaterMark: CHUNK }))
    yield raw as Buffer;
}

export function detectFamily(head: Buffer): Family {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf-8-bom';
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  // without a BOM, UTF-16 text of mostly Latin characters has a NUL in every other byte
  const n = Math.min(head.length, 4096) & ~1;
  if (n >= 4) {
    let even = 0;
    let odd = 0;
    for (let i = 0; i < n; i += 2) {
      if (head[i] === 0) even++;
      if (head[i + 1] === 0) odd++;
    }
    const half = n / 2;
    if (odd > 0.3 * half && even < 0.05 * half) return 'utf-16le';
    if (even > 0.3 * half && odd < 0.05 * half) return 'utf-16be';
  }
  return 'utf-8';
}

/** Refuses web pages, XML and binary files that arrive under a .csv name. */
export function refuseNonTable(text: string): void {
  let i = 0;
  while (
    i < text.length &&
    (text[i] === ' ' ||
      text[i] === '\t' ||
      text[i] === '\r' ||
      text[i] === '\n' ||
      text[i] === '\uFEFF')
  )
    i++;
  const lead = text.slice(i, i + 4096).toLowerCase();
  if (lead.startsWith('<?xml')) {
    if (lead.includes('urn:schemas-microsoft-com:office:spreadsheet')) {
      throw new FileError(
        'FILE_UNSUPPORTED_FORMAT',
        `This is an Excel "XML Spreadsheet 2003" file, which is not read: open it in Excel and save it as .xlsx or .csv. ${SUPPORTED}`,
      );
    }
    if (lead.includes('<html')) throw htmlError();
    throw new FileError(
      'FILE_UNSUPPORTED_FORMAT',
      `This is an XML document, not a statement table. ${SUPPORTED}`,
    );
  }
  const htmlStarts = [
    '<!doctype html',
    '<html',
    '<head',
    '<body',
    '<table',
    '<meta',
    '<script',
    '<div',
    '<title',
  ];
  if (
    htmlStarts.some((s) => lead.startsWith(s)) ||
    (lead.startsWith('<!--') && lead.includes('<html'))
  )
    throw htmlError();
  let control = 0;
  const sample = text.slice(0, 65536);
  for (let j = 0; j < sample.length; j++) {
    const c = sample.charCodeAt(j);
    if (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0x0c && c !== 0x1a && c !== 0)
      control++;
  }
  if (control > 8 && control > sample.length / 100) {
    throw new FileError(
      'FILE_UNSUPPORTED_FORMAT',
      `This is a binary file, not a statement table. ${SUPPORTED}`,
    );
  }
}

function htmlError(): FileError {
  return new FileError(
    'FILE_IS_HTML',
    'This is a web page (HTML), not a statement: download the statement itself (CSV or Excel) from the portal, not the page.',
  );
}

const SEP_LINE_MAX = 16;

/** Streams text through the normalizations every clean file gets. */
class Normalizer {
  private started = false;
  private pendingCR = false;
  private firstLine: string | null = '';
  sepDelimiter: Delimiter | null = null;
  hasContent = false;

  push(text: string): string {
    let t = text;
    if (!this.started) {
      this.started = true;
      if (t.startsWith('\uFEFF')) t = t.slice(1);
    }
    if (t.includes('\0') || t.includes('\x1a')) t = t.replaceAll('\0', '').replaceAll('\x1a', '');
    if (this.pendingCR) t = `\r${t}`;
    this.pendingCR = t.endsWith('\r');
    if (this.pendingCR) t = t.slice(0, -1);
    if (t.includes('\r')) t = t.replace(/\r\n?/g, '\n');
    if (this.firstLine !== null) {
      // the first line is held back until it is known whether it is an Excel `sep=` directive
      this.firstLine += t;
      const nl = this.firstLine.indexOf('\n');
      if (nl < 0 && this.firstLine.length <= SEP_LINE_MAX) return '';
      const line = nl < 0 ? null : this.firstLine.slice(0, nl);
      const rest = this.firstLine;
      this.firstLine = null;
      if (line !== null && /^sep=.\s*$/i.test(line)) {
        const d = line[4] as string;
        if (d === ',' || d === ';' || d === '\t' || d === '|') this.sepDelimiter = d;
        return this.note(rest.slice(nl + 1));
      }
      return this.note(rest);
    }
    return this.note(t);
  }

  end(): string {
    let t = '';
    if (this.firstLine !== null) {
      const line = this.firstLine;
      this.firstLine = null;
      t = /^sep=.\s*$/i.test(line) ? '' : line;
    }
    if (this.pendingCR) t += '\n';
    return this.note(t);
  }

  private note(text: string): string {
    let t = text;
    // a byte-order mark at the start of a later line (exports joined end to end, `cat a.csv b.csv`)
    // is no character of the line's first cell, and one inside a cell (U+FEFF, a zero-width
    // no-break space, which Excel shows as nothing) no character of that cell: `\uFEFF12.50` is 12.50
    if (t.includes('\uFEFF')) t = t.replaceAll('\uFEFF', '');
    if (!this.hasContent && /[^\s,;|"]/.test(t)) this.hasContent = true;
    return t;
  }
}

interface ByteFacts {
  validUtf8: boolean;
  /** a UTF-8 byte-order mark (U+FEFF) anywhere after the file's first bytes */
  bom: boolean;
  nul: boolean;
  sub: boolean;
  loneCR: boolean;
  crlf: number;
  lf: number;
  sepLine: boolean;
  content: boolean;
}

/** U+FEFF in UTF-8: a byte-order mark, or a zero-width no-break space inside a cell. */
const BOM_BYTES = Buffer.from([0xef, 0xbb, 0xbf]);

/** The bytes a scanned chunk may hold outside any cell content (white space, NUL, SUB, BOM, `,;|"`). */
function isFillerByte(b: number): boolean {
  return (
    b === 0x20 ||
    b === 0x09 ||
    b === 0x0a ||
    b === 0x0d ||
    b === 0 ||
    b === 0x1a ||
    b === 0xef ||
    b === 0xbb ||
    b === 0xbf ||
    b === 0x2c ||
    b === 0x3b ||
    b === 0x7c ||
    b === 0x22
  );
}

/** Whether the file's first chunk opens (after a byte-order mark) with an Excel `sep=` line. */
function opensWithSepLine(chunk: Buffer): boolean {
  const start = chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0;
  return /^sep=.\s*(\r?\n|\r|$)/i.test(chunk.subarray(start, start + 8).toString('latin1'));
}

/** Where a buffer's last whole UTF-8 sequence ends: before an incomplete trailing one. */
function utf8WholeEnd(buf: Buffer): number {
  let cut = buf.length;
  for (let k = 1; k <= 3 && cut - k >= 0; k++) {
    const b = buf[cut - k] as number;
    if ((b & 0xc0) === 0x80) continue;
    if (b >= 0xc0) cut -= k;
    break;
  }
  return cut;
}

/** Whether the chunk holds a byte of cell content. */
function hasContentByte(chunk: Buffer): boolean {
  for (let i = 0; i < chunk.length; i++) if (!isFillerByte(chunk[i] as number)) return true;
  return false;
}

/** Whether a CR in the chunk is followed by anything but LF (a CR ending the chunk is judged later). */
function hasLoneCR(chunk: Buffer): boolean {
  for (let r = chunk.indexOf(0x0d); r >= 0; r = chunk.indexOf(0x0d, r + 1)) {
    if (r + 1 < chunk.length && chunk[r + 1] !== 0x0a) return true;
  }
  return false;
}

/** The facts of an 8-bit file gathered chunk by chunk, with what each check carries over a chunk's end. */
class ByteScan {
  readonly facts: ByteFacts = {
    validUtf8: true,
    bom: false,
    nul: false,
    sub: false,
    loneCR: false,
    crlf: 0,
    lf: 0,
    sepLine: false,
    content: false,
  };
  /** an incomplete UTF-8 sequence ending the chunk before */
  private carry: Buffer = Buffer.alloc(0);
  /** the chunk before's last bytes, for a byte-order mark split between two chunks */
  private tail: Buffer = Buffer.alloc(0);
  private prevCR = false;
  private first = true;

  push(chunk: Buffer): void {
    const facts = this.facts;
    if (this.first) {
      this.first = false;
      facts.sepLine = opensWithSepLine(chunk);
    }
    if (facts.validUtf8) this.checkUtf8(chunk);
    if (!facts.bom) this.findBom(chunk);
    if (!facts.nul && chunk.includes(0)) facts.nul = true;
    if (!facts.sub && chunk.includes(0x1a)) facts.sub = true;
    if (!facts.content && hasContentByte(chunk)) facts.content = true;
    this.countLineBreaks(chunk);
    if (!facts.loneCR && hasLoneCR(chunk)) facts.loneCR = true;
    this.prevCR = chunk[chunk.length - 1] === 0x0d;
  }

  end(): ByteFacts {
    const facts = this.facts;
    if (facts.validUtf8 && this.carry.length > 0 && !isUtf8(this.carry)) facts.validUtf8 = false;
    // a CR ending the file is a lone one
    if (this.prevCR) facts.loneCR = true;
    return facts;
  }

  /** Validates the chunk up to its last whole sequence, the rest carried to the next. */
  private checkUtf8(chunk: Buffer): void {
    const buf = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    const cut = utf8WholeEnd(buf);
    if (!isUtf8(buf.subarray(0, cut))) this.facts.validUtf8 = false;
    this.carry = Buffer.from(buf.subarray(cut));
  }

  /** A byte-order mark ending in this chunk (one the chunk before held whole was already seen). */
  private findBom(chunk: Buffer): void {
    const from = this.tail.length;
    const joined = this.tail.length ? Buffer.concat([this.tail, chunk]) : chunk;
    for (let b = joined.indexOf(BOM_BYTES); b >= 0; b = joined.indexOf(BOM_BYTES, b + 1)) {
      if (b + BOM_BYTES.length > from) {
        this.facts.bom = true;
        break;
      }
    }
    this.tail = Buffer.from(chunk.subarray(Math.max(0, chunk.length - (BOM_BYTES.length - 1))));
  }

  /** Counts the chunk's LFs as CR LF or bare LF (a CR ending the chunk before counts). */
  private countLineBreaks(chunk: Buffer): void {
    for (let i = chunk.indexOf(0x0a); i >= 0; i = chunk.indexOf(0x0a, i + 1)) {
      const crBefore = i > 0 ? chunk[i - 1] === 0x0d : this.prevCR;
      if (crBefore) this.facts.crlf++;
      else this.facts.lf++;
    }
  }
}

/** One pass over an 8-bit file: is it valid UTF-8, and does it need any cleaning? */
async function scanBytes(source: TextSource, deadline: Deadline): Promise<ByteFacts> {
  const scan = new ByteScan();
  for await (const raw of chunksOf(source)) {
    deadline.check();
    scan.push(raw);
  }
  return scan.end();
}

type Produce = (write: (s: string) => Promise<void>) => Promise<void>;

/**
 * Writes the clean text to `out`: from a source read whole, at once (one write in this thread, no
 * trip to the thread pool behind the other threads' DuckDB queries), answering its bytes; else
 * streamed a chunk at a time.
 */
async function writeAll(
  out: string,
  source: TextSource,
  produce: Produce,
): Promise<Buffer | undefined> {
  if (source.bytes) {
    const parts: string[] = [];
    await produce(async (s) => {
      parts.push(s);
    });
    const bytes = Buffer.from(parts.join(''));
    writeFileSync(out, bytes);
    return bytes;
  }
  await writeStreamed(out, produce);
  return undefined;
}

async function writeStreamed(out: string, produce: Produce): Promise<void> {
  const fh = await open(out, 'w');
  try {
    let pending = '';
    const write = async (s: string) => {
      pending += s;
      if (pending.length >= CHUNK) {
        await fh.write(pending);
        pending = '';
      }
    };
    await produce(write);
    if (pending) await fh.write(pending);
  } finally {
    await fh.close();
  }
}

/**
 * The lines of the file that are not valid UTF-8, joined, up to SAMPLE_BYTES: what the legacy
 * encoding is detected on (the ASCII and UTF-8 lines around them tell nothing of it).
 */
async function nonUtf8Lines(source: TextSource, deadline: Deadline): Promise<Buffer> {
  const picked: Buffer[] = [];
  let bytes = 0;
  let carry: Buffer = Buffer.alloc(0);
  const take = (line: Buffer) => {
    if (isUtf8(line)) return;
    picked.push(Buffer.from(line));
    bytes += line.length;
  };
  for await (const raw of chunksOf(source)) {
    deadline.check();
    const buf = carry.length ? Buffer.concat([carry, raw]) : raw;
    let start = 0;
    for (let k = buf.indexOf(0x0a); k >= 0 && bytes < SAMPLE_BYTES; k = buf.indexOf(0x0a, start)) {
      take(buf.subarray(start, k + 1));
      start = k + 1;
    }
    if (bytes >= SAMPLE_BYTES) break;
    // (a line longer than the sample is cut: its start is sample enough)
    carry = Buffer.from(buf.subarray(start, start + SAMPLE_BYTES));
  }
  if (bytes < SAMPLE_BYTES && carry.length) take(carry);
  return Buffer.concat(picked).subarray(0, SAMPLE_BYTES);
}

/** How prepareText reads a file. */
export interface TextOptions {
  /** the encoding the uploader named (iconv-lite's name, validated): read instead of any detected */
  encoding?: string | undefined;
}

export async function prepareText(
  source: TextSource,
  workDir: string,
  outName: string,
  deadline: Deadline,
  maxLineBytes: number,
  options: TextOptions = {},
): Promise<CleanText> {
  const size = source.bytes ? source.bytes.length : (await stat(source.path)).size;
  if (size === 0) throw new FileError('FILE_EMPTY', 'The file is empty (0 bytes).');
  const head = source.bytes ? source.bytes.subarray(0, 65536) : await readHead(source.path, 65536);
  const named = options.encoding;
  const family = named === undefined ? detectFamily(head) : null;
  const out = path.join(workDir, outName);

  // decoded whole in one encoding: UTF-16, or the one the uploader named
  const whole = family === 'utf-16le' || family === 'utf-16be' ? family : named;
  if (whole !== undefined) return decodeWhole(source, out, head, whole, deadline);

  refuseNonTable(head.toString('utf8'));
  const facts = await scanBytes(source, deadline);
  if (!facts.content) throw noData();
  const mixedBreaks = facts.crlf > 0 && facts.lf > 0;
  if (
    facts.validUtf8 &&
    family === 'utf-8' &&
    !facts.bom &&
    !facts.nul &&
    !facts.sub &&
    !facts.loneCR &&
    !mixedBreaks &&
    !facts.sepLine
  ) {
    return {
      path: source.path,
      encoding: 'utf-8',
      sepDelimiter: null,
      newline: facts.crlf > 0 ? '\r\n' : '\n',
      ...(source.bytes ? { bytes: source.bytes } : {}),
    };
  }

  const norm = new Normalizer();
  let encoding: string = family!;
  let uncertainEncoding: CleanText['uncertainEncoding'];
  let bytes: Buffer | undefined;
  if (facts.validUtf8) bytes = await writeUtf8(source, out, norm, deadline);
  else
    ({ encoding, uncertainEncoding, bytes } = await writeLegacy(
      source,
      out,
      norm,
      deadline,
      maxLineBytes,
    ));
  if (!norm.hasContent) throw noData();
  return {
    path: out,
    encoding,
    sepDelimiter: norm.sepDelimiter,
    newline: '\n',
    ...(uncertainEncoding ? { uncertainEncoding } : {}),
    ...(bytes ? { bytes } : {}),
  };
}

function noData(): FileError {
  return new FileError(
    'FILE_NO_DATA',
    'The file holds no data: only white space, blank lines or a byte-order mark.',
  );
}

/** A file decoded whole in one encoding (UTF-16, or the one the uploader named), normalized. */
async function decodeWhole(
  source: TextSource,
  out: string,
  head: Buffer,
  whole: string,
  deadline: Deadline,
): Promise<CleanText> {
  refuseNonTable(
    iconv.decode(whole.startsWith('utf-16') ? head.subarray(0, head.length & ~1) : head, whole),
  );
  const norm = new Normalizer();
  const bytes = await writeAll(out, source, async (write) => {
    const decoder = iconv.getDecoder(whole);
    for await (const raw of chunksOf(source)) {
      deadline.check();
      await write(norm.push(decoder.write(raw)));
    }
    await write(norm.push(decoder.end() ?? ''));
    await write(norm.end());
  });
  if (!norm.hasContent) throw noData();
  return {
    path: out,
    encoding: whole,
    sepDelimiter: norm.sepDelimiter,
    newline: '\n',
    ...(bytes ? { bytes } : {}),
  };
}

/** A valid UTF-8 file that needs cleaning, normalized into `out`. */
async function writeUtf8(
  source: TextSource,
  out: string,
  norm: Normalizer,
  deadline: Deadline,
): Promise<Buffer | undefined> {
  return writeAll(out, source, async (write) => {
    const decoder = new StringDecoder('utf8');
    for await (const raw of chunksOf(source)) {
      deadline.check();
      await write(norm.push(decoder.write(raw)));
    }
    await write(norm.push(decoder.end()));
    await write(norm.end());
  });
}

/**
 * A file not UTF-8 as a whole, normalized into `out`: in the legacy encoding its other lines are
 * in (Windows-1252 when unsure: never Latin-1, whose 0x80-0x9F are control characters instead of
 * € ’ œ). Each line is decoded as UTF-8 when it is valid UTF-8 (files concatenated from exports of
 * different ages mix them), except in a multibyte encoding, whose pairs of bytes can be valid
 * UTF-8 by chance.
 */
async function writeLegacy(
  source: TextSource,
  out: string,
  norm: Normalizer,
  deadline: Deadline,
  maxLineBytes: number,
): Promise<{
  encoding: string;
  uncertainEncoding: CleanText['uncertainEncoding'];
  bytes: Buffer | undefined;
}> {
  const legacy = await detectLegacyEncoding(await nonUtf8Lines(source, deadline));
  let utf8Lines = 0;
  const decodeLine = (line: Buffer): string => {
    if (!legacy.multibyte && isUtf8(line)) {
      for (const b of line) {
        if (b >= 0x80) {
          utf8Lines++;
          break;
        }
      }
      return line.toString('utf8');
    }
    return iconv.decode(line, legacy.encoding);
  };
  const bytes = await writeAll(out, source, async (write) => {
    let carry: Buffer = Buffer.alloc(0);
    // line breaks passed (CR LF counted once), for the position of a line too long
    let breaks = 0;
    let afterCR = false;
    for await (const raw of chunksOf(source)) {
      deadline.check();
      const buf = carry.length ? Buffer.concat([carry, raw]) : raw;
      // lines end at LF or CR (old Mac files have no LF at all)
      let start = 0;
      const parts: string[] = [];
      for (let k = 0; k < buf.length; k++) {
        const b = buf[k];
        if (b === 0x0a || b === 0x0d) {
          if (b === 0x0d || !afterCR) breaks++;
          afterCR = b === 0x0d;
          parts.push(decodeLine(buf.subarray(start, k + 1)));
          start = k + 1;
        } else afterCR = false;
      }
      carry = Buffer.from(buf.subarray(start));
      if (carry.length > maxLineBytes) {
        throw new FileError(
          'FIELD_TOO_LARGE',
          `Line ${breaks + 1} of the file is longer than ${formatBytes(maxLineBytes)}; it is not a statement table.`,
        );
      }
      await write(norm.push(parts.join('')));
    }
    if (carry.length) await write(norm.push(decodeLine(carry)));
    await write(norm.end());
  });
  const encoding = utf8Lines > 0 ? `utf-8+${legacy.encoding}` : legacy.encoding;
  return { encoding, uncertainEncoding: legacy.uncertain, bytes };
}
