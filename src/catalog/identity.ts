// Identity of a track within a block: by ISRC where a row has a valid one, else by normalized
// title and artist. The same normalization decides which titles an organization ignores.
import { normalizeIsrc } from '../ingest/values.ts';

/** NFKC and lower case, without diacritics (the combining marks of the NFKD form). */
export function foldCase(raw: string): string {
  return raw.normalize('NFKD').replace(/\p{M}+/gu, '').normalize('NFKC').toLowerCase();
}

/** NFKC, lower case, diacritics and punctuation removed, white space collapsed. */
export function normalizeText(raw: string | null | undefined): string {
  if (!raw) return '';
  return foldCase(raw)
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** The identity key of a row, or null when it names no track (no ISRC and no title). */
export function identityKey(row: { isrc: string | null; title: string | null; artist: string | null }): string | null {
  const isrc = row.isrc ? normalizeIsrc(row.isrc) : null;
  if (isrc) return `isrc:${isrc}`;
  const title = normalizeText(row.title);
  if (!title) return null;
  return `ta:${title}\u001f${normalizeText(row.artist)}`;
}
