// A streaming XLSX writer: one sheet, rows written as they come, so memory stays flat whatever the
// row count. Numbers are written as the exact decimal text they arrive as (`<v>12.340000000000</v>`,
// a numeric cell), never through a JavaScript float, which is why the sheet XML is made here rather
// than by a spreadsheet library (they take numbers as floats); text is an inline string (no
// shared-string table to hold in memory). Every row and cell names its reference (`r="B7"`): the
// schema makes it optional, but readers such as exceljs fail without it.
// The zip package around it is yazl's, streamed.
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';
import { AppError } from '../errors.ts';
import type { ColumnKind } from './definitions.ts';

/** A fixed modification time: the bytes do not depend on when they were written. */
const MTIME = new Date(Date.UTC(2000, 0, 1));

// XML 1.0 allows no control characters but tab, line feed and carriage return
// eslint-disable-next-line no-control-regex
const XML_INVALID = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  '\r': '&#13;',
};

/**
 * Text as XML character data. A carriage return is written as a reference: a literal one would be
 * read as a line feed (XML's end-of-line handling turns CR LF and a lone CR into LF).
 */
export function xmlText(value: string): string {
  return value.replace(XML_INVALID, '').replace(/[&<>"\r]/g, (c) => ESCAPES[c]!);
}

/** The column letters of a 0-based column index: A, ..., Z, AA, AB, ... */
function columnLetters(index: number): string {
  let letters = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26))
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  return letters;
}

/** The most characters an Excel cell holds; a longer text would be cut or the file "repaired". */
export const XLSX_CELL_MAX = 32_767;

function cell(ref: string, value: string | null, kind: ColumnKind): string {
  if (value === null) return `<c r="${ref}"/>`;
  if (kind === 'number') return `<c r="${ref}"><v>${value}</v></c>`;
  // cutting it would make the workbook disagree with the same export as CSV or Parquet
  if (value.length > XLSX_CELL_MAX) {
    throw new AppError(
      'EXPORT_XLSX_CELL_TOO_LONG',
      `Cell ${ref} holds ${value.length} characters, more than the ${XLSX_CELL_MAX} an Excel cell holds; export as CSV or Parquet`,
    );
  }
  return `<c r="${ref}" t="inlineStr"><is><t xml:space="preserve">${xmlText(value)}</t></is></c>`;
}

const STATIC_PARTS: [string, string][] = [
  [
    '[Content_Types].xml',
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
      '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>' +
      '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>',
  ],
  [
    '_rels/.rels',
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>',
  ],
  [
    'xl/_rels/workbook.xml.rels',
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>' +
      '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>',
  ],
  [
    'xl/styles.xml',
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">' +
      '<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><fills count="1"><fill><patternFill patternType="none"/></fill></fills>' +
      '<borders count="1"><border/></borders><cellStyleXfs count="1"><xf/></cellStyleXfs><cellXfs count="1"><xf/></cellXfs></styleSheet>',
  ],
];

export interface SheetColumn {
  name: string;
  kind: ColumnKind;
}

/**
 * Writes an XLSX file of one sheet: the header row, then every row of `rows` (cells as text or
 * null, one per column). Batches of rows are joined into one string before they are written.
 */
export async function writeXlsx(
  file: string,
  sheetName: string,
  columns: SheetColumn[],
  rows: AsyncIterable<(string | null)[][]>,
): Promise<void> {
  const zip = new yazl.ZipFile();
  const written = pipeline(zip.outputStream, createWriteStream(file));
  for (const [name, xml] of STATIC_PARTS)
    zip.addBuffer(Buffer.from(xml, 'utf8'), name, { mtime: MTIME });
  zip.addBuffer(
    Buffer.from(
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ' +
        'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">' +
        `<sheets><sheet name="${xmlText(sheetName.slice(0, 31))}" sheetId="1" r:id="rId1"/></sheets></workbook>`,
      'utf8',
    ),
    'xl/workbook.xml',
    { mtime: MTIME },
  );
  const letters = columns.map((_, i) => columnLetters(i));
  async function* sheet(): AsyncIterable<string> {
    yield '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>';
    yield `<row r="1">${columns.map((c, i) => cell(`${letters[i]}1`, c.name, 'text')).join('')}</row>`;
    let n = 1;
    for await (const batch of rows) {
      let xml = '';
      for (const row of batch) {
        n += 1;
        xml += `<row r="${n}">`;
        for (let i = 0; i < columns.length; i++)
          xml += cell(`${letters[i]}${n}`, row[i] ?? null, columns[i]!.kind);
        xml += '</row>';
      }
      yield xml;
    }
    yield '</sheetData></worksheet>';
  }
  async function* bytes(): AsyncIterable<Buffer> {
    for await (const text of sheet()) if (text.length > 0) yield Buffer.from(text, 'utf8');
  }
  const source = Readable.from(bytes(), { objectMode: false });
  // a failure while rows are read ends the zip's stream with it, and so the write
  const failed = new Promise<never>((_, reject) => source.once('error', reject));
  zip.addReadStream(source, 'xl/worksheets/sheet1.xml', { mtime: MTIME });
  zip.end();
  try {
    await Promise.race([written, failed]);
  } catch (error) {
    (zip.outputStream as unknown as Readable).destroy(error as Error);
    await written.catch(() => {});
    throw error;
  }
}
