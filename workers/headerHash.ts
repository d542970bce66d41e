// The header hash of DESIGN.md: SHA-256 of the header cells, each trimmed, lower-cased and with
// inner white space collapsed (zero-width characters dropped), joined by U+001F. Mappings are
// looked up by it.
import { createHash } from 'node:crypto';
import { fail, type WorkerResult } from './results.ts';

/** Zero-width characters exports leave in headers (U+200B-U+200D, U+2060, U+FEFF): never part of a name. */
export const ZERO_WIDTH = /[\u200B-\u200D\u2060\uFEFF]/g;

export function normalizeHeaderCell(cell: string): string {
  return cell.replace(ZERO_WIDTH, '').trim().toLowerCase().replace(/\s+/g, ' ');
}

export function computeHeaderHash(cells: readonly string[]): string {
  return createHash('sha256').update(cells.map(normalizeHeaderCell).join('\u001f'), 'utf8').digest('hex');
}

export function headerHash(input: { cells: unknown }): WorkerResult<{ hash: string; normalized: string[] }> {
  const { cells } = input;
  if (!Array.isArray(cells) || cells.length === 0 || !cells.every((c) => typeof c === 'string')) {
    return fail('VALIDATION_FAILED', 'cells must be a non-empty array of strings');
  }
  return { ok: true, hash: computeHeaderHash(cells), normalized: cells.map(normalizeHeaderCell) };
}
