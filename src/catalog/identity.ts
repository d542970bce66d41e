// Identity of a track within a block: by ISRC where a row has a valid one, else by normalized
// title and artist. The same normalization decides which titles an organization ignores.
import { normalizeIsrc } from '../ingest/values.ts';

/** NFKC and lower case, without diacritics (the combining marks of the NFKD form). */
export function foldCase(raw: string): string {
  return raw.normalize('NFKD').replace(/\p{M}+/gu, '').normalize('NFKC').toLowerCase();
}

/**
 * Apostrophes (`Don't` = `Dont` = `Don’t`, not `Don T`) and invisible format characters (zero-width
 * spaces and joiners, direction marks, soft hyphens) go before anything else: folding would make a
 * space of some of them (´ is a space and a combining accent once decomposed).
 */
const DROPPED = /[\p{Cf}'’‘ʼ`´]/gu;

/** NFKC, lower case, diacritics, apostrophes and format characters removed, other punctuation a space, white space collapsed. */
export function normalizeText(raw: string | null | undefined): string {
  if (!raw) return '';
  return foldCase(raw.replace(DROPPED, ''))
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/**
 * The normalization of identity keys stored before apostrophes and format characters were dropped
 * (they were spaces): a block refresh re-keys what it stored under it (src/catalog/blocks.ts).
 */
export function legacyNormalizeText(raw: string | null | undefined): string {
  if (!raw) return '';
  return foldCase(raw)
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** The identity key of a row, or null when it names no track (no ISRC and no title). */
export function identityKey(row: { isrc: string | null; title: string | null; artist: string | null }, normalize = normalizeText): string | null {
  const isrc = row.isrc ? normalizeIsrc(row.isrc) : null;
  if (isrc) return `isrc:${isrc}`;
  const title = normalize(row.title);
  if (!title) return null;
  return `ta:${title}\u001f${normalize(row.artist)}`;
}

/** The identity key a row had before apostrophes and format characters were dropped. */
export function legacyIdentityKey(row: { isrc: string | null; title: string | null; artist: string | null }): string | null {
  return identityKey(row, legacyNormalizeText);
}
