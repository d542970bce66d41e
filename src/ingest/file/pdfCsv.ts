// A PDF statement as CSV text: its text lines (pdf.ts) as table rows (pdfTable.ts), written for
// the delimited reader. Loaded on demand (pdfjs-dist takes a moment to load).
import { writeFile } from 'node:fs/promises';
import type { RemovedRow } from '../fileTypes.ts';
import { csvField } from './csvField.ts';
import type { Deadline } from './limits.ts';
import { readPdfText } from './pdf.ts';
import { pdfRows } from './pdfTable.ts';

interface PdfCsv {
  csvPath: string;
  pages: number;
  /** lines kept out of the CSV (page headers and footers, subtotals), line -1 */
  removed: RemovedRow[];
}

export async function pdfToCsv(file: string, csvPath: string, deadline: Deadline): Promise<PdfCsv> {
  const text = await readPdfText(file, deadline);
  const { rows, removed } = pdfRows(text.lines);
  deadline.check();
  await writeFile(csvPath, rows.map((cells) => cells.map(csvField).join(',')).join('\n') + '\n');
  return { csvPath, pages: text.pages, removed };
}
