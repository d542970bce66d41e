// A PDF's text layer as positioned lines: pdfjs-dist (Mozilla's PDF.js, legacy build for Node)
// reads each page's text items; items on one baseline make a line, items close together on it
// make a segment (one cell's text). No rendering, no fonts loaded, no scripts run. The table is
// found from these lines by pdfTable.ts. Refusals: a password (FILE_ENCRYPTED), a damaged file
// (FILE_DAMAGED), no text at all (FILE_PDF_NO_TEXT: a scan), too many pages or text items
// (FILE_TOO_LARGE_DECOMPRESSED); the clock (Deadline) is checked between pages and text chunks.
import { readFile } from 'node:fs/promises';
import type { TextItem } from 'pdfjs-dist/types/src/display/api.js';
import { type Deadline, FileError } from './limits.ts';

/** One cell's text on a line: its left and right edges in PDF points. */
export interface Segment {
  x0: number;
  x1: number;
  text: string;
}

export interface PdfLine {
  /** 1-based page number */
  page: number;
  /** the baseline's distance from the top of the page, in points */
  top: number;
  /** the page's height, in points */
  pageHeight: number;
  /** the line's font size (the largest of its items) */
  size: number;
  segments: Segment[];
}

interface PdfText {
  pages: number;
  lines: PdfLine[];
}

/** Pages read from one PDF: a statement of thousands of pages is sent as CSV. */
const MAX_PDF_PAGES = 5_000;
/** Text items read from one PDF, all pages together (a dense page holds about 2,000). */
const MAX_PDF_TEXT_ITEMS = 2_000_000;
/** Items closer than this share a segment (a cell), in font sizes: a word space is about 0.28 (0.6 in a fixed-width font: see linesOf). */
const SEGMENT_GAP = 0.45;
/** Items whose baselines differ by less than this share a line, in font sizes. */
const LINE_TOLERANCE = 0.35;

interface Item {
  x: number;
  y: number;
  w: number;
  size: number;
  str: string;
}

const pdfjs = () => import('pdfjs-dist/legacy/build/pdf.mjs');

/** Every page's text lines, top to bottom, left to right. */
export async function readPdfText(
  file: string,
  deadline: Deadline,
  maxPages = MAX_PDF_PAGES,
  maxItems = MAX_PDF_TEXT_ITEMS,
): Promise<PdfText> {
  const { getDocument } = await pdfjs();
  const data = new Uint8Array(await readFile(file));
  const task = getDocument({
    data,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: true,
    enableXfa: false,
    verbosity: 0,
  });
  let doc;
  try {
    doc = await task.promise;
  } catch (error) {
    await task.destroy();
    throw pdfError(error);
  }
  try {
    if (doc.numPages > maxPages) {
      throw new FileError(
        'FILE_TOO_LARGE_DECOMPRESSED',
        `The PDF has ${doc.numPages.toLocaleString('en-US')} pages; at most ${maxPages.toLocaleString('en-US')} are read: download the statement as CSV or Excel.`,
      );
    }
    const lines: PdfLine[] = [];
    let items = 0;
    let chars = 0;
    for (let p = 1; p <= doc.numPages; p++) {
      deadline.check();
      const page = await doc.getPage(p).catch((error: unknown) => {
        throw pdfError(error);
      });
      const pageHeight = page.view[3]! - page.view[1]!;
      const found: Item[] = [];
      const reader = page.streamTextContent({ includeMarkedContent: false }).getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          deadline.check();
          for (const raw of value.items as TextItem[]) {
            if (++items > maxItems) {
              throw new FileError(
                'FILE_TOO_LARGE_DECOMPRESSED',
                `The PDF holds more than ${maxItems.toLocaleString('en-US')} pieces of text; download the statement as CSV or Excel.`,
              );
            }
            for (const item of itemsOf(raw, page.view[1]!, pageHeight)) {
              chars += item.str.length;
              found.push(item);
            }
          }
        }
      } catch (error) {
        await reader.cancel().catch(() => {});
        throw pdfError(error);
      }
      lines.push(...linesOf(found, p, pageHeight));
      page.cleanup();
    }
    if (chars === 0) {
      throw new FileError(
        'FILE_PDF_NO_TEXT',
        `The PDF has no text layer (${doc.numPages} page${doc.numPages === 1 ? '' : 's'} of images only: a scan or a printed-to-image file); download the statement as CSV or Excel, or a PDF with text.`,
      );
    }
    return { pages: doc.numPages, lines };
  } finally {
    await doc.destroy();
  }
}

/** pdfjs's refusals as ours: a password, a damaged or truncated file; a FileError of ours passes. */
function pdfError(error: unknown): FileError {
  if (error instanceof FileError) return error;
  const name = (error as Error)?.name ?? '';
  const message = String((error as Error)?.message ?? error).slice(0, 120);
  if (name === 'PasswordException')
    return new FileError(
      'FILE_ENCRYPTED',
      'The PDF is password-protected; save it again without a password and upload it again.',
    );
  if (error instanceof RangeError)
    return new FileError(
      'FILE_TOO_LARGE_DECOMPRESSED',
      `The PDF is too large to read (${message}); download the statement as CSV or Excel.`,
    );
  return new FileError(
    'FILE_DAMAGED',
    `The PDF is damaged or incomplete (${message}); download it again.`,
  );
}

/**
 * A text item upright on the page, its baseline measured from the top; none for white space and
 * turned text. An item holding runs of two spaces or more (a line of a fixed-width report written
 * as one string) is split there, each piece placed by its share of the item's characters: exact
 * in a fixed-width font, close in others.
 */
function itemsOf(raw: TextItem, bottom: number, pageHeight: number): Item[] {
  if (typeof raw.str !== 'string' || raw.str.trim() === '') return [];
  const [a, b, c, d, e, f] = raw.transform as number[];
  // turned or mirrored text (a stamp, a watermark, a vertical label) is no table cell
  if (!(a! > 0) || Math.abs(b!) > 1e-3 * a! || Math.abs(c!) > 1e-3 * Math.abs(d!)) return [];
  const size = Math.abs(d!) || raw.height || a!;
  if (![e, f, size, raw.width].every((n) => Number.isFinite(n))) return [];
  const y = pageHeight - (f! - bottom);
  const width = Math.max(0, raw.width);
  const perChar = raw.str.length > 0 ? width / raw.str.length : 0;
  const items: Item[] = [];
  for (const piece of raw.str.matchAll(/\S+(?: \S+)*/g)) {
    const str = piece[0].replace(/\s+/g, ' ');
    items.push({ x: e! + perChar * piece.index, y, w: perChar * piece[0].length, size, str });
  }
  return items;
}

/** Items grouped into lines by baseline, and each line's items into segments by the gaps between them. */
function linesOf(items: Item[], page: number, pageHeight: number): PdfLine[] {
  items.sort((p, q) => p.y - q.y || p.x - q.x);
  const groups: Item[][] = [];
  for (const item of items) {
    const last = groups[groups.length - 1];
    if (
      last &&
      Math.abs(item.y - last[0]!.y) <= LINE_TOLERANCE * Math.max(item.size, last[0]!.size)
    )
      last.push(item);
    else groups.push([item]);
  }
  return groups.map((group) => {
    group.sort((p, q) => p.x - q.x);
    const segments: Segment[] = [];
    let size = 0;
    let lastChar = 0;
    for (const item of group) {
      size = Math.max(size, item.size);
      const last = segments[segments.length - 1];
      const gap = last ? item.x - last.x1 : Infinity;
      // one space of a fixed-width font (0.6 of the size) is wider than the usual limit: a gap of
      // about a character's width or less still joins two words of one cell
      const char = item.str.length > 0 ? item.w / item.str.length : 0;
      const joins = gap <= Math.max(SEGMENT_GAP * item.size, 1.1 * Math.min(char, lastChar));
      lastChar = char;
      if (last && joins) {
        last.text += gap > 0.1 * item.size ? ` ${item.str}` : item.str;
        last.x1 = Math.max(last.x1, item.x + item.w);
      } else segments.push({ x0: item.x, x1: item.x + item.w, text: item.str });
    }
    return { page, top: group[0]!.y, pageHeight, size, segments };
  });
}
