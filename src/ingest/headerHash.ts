// The header hash of DESIGN.md: SHA-256 of the header cells, each trimmed, lower-cased and with
// inner white space collapsed (zero-width characters dropped), joined by U+001F. Mappings are
// looked up by it.
import { createHash } from 'node:crypto';

/** Zero-width characters exports leave in headers (U+200B-U+200D, U+2060, U+FEFF): never part of a name. */
export const ZERO_WIDTH = /[\u200B-\u200D\u2060\uFEFF]/g;

export function normalizeHeaderCell(cell: string): string {
  return cell.replace(ZERO_WIDTH, '').trim().toLowerCase().replace(/\s+/g, ' ');
}

export function computeHeaderHash(cells: readonly string[]): string {
  return createHash('sha256')
    .update(cells.map(normalizeHeaderCell).join('\u001f'), 'utf8')
    .digest('hex');
}
