// Identity of a track within a block: by ISRC where a row has a valid one, else by normalized
// title and artist. The same normalization decides which titles an organization ignores.
import { createHash } from 'node:crypto';
import { normalizeIsrc } from '../ingest/values.ts';

/** NFKC and lower case, without diacritics (the combining marks of the NFKD form). */
export function foldCase(raw: string): string {
  return raw
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .normalize('NFKC')
    .toLowerCase();
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

const KEY_PART = 250;

/**
 * A normalized text as a part of a stored key: at most 250 code points (and so within the size a
 * PostgreSQL index entry may have); a longer one is its first 200 followed by `~` and a hash of
 * the whole, so texts that differ only further on remain two keys.
 */
export function boundKey(text: string): string {
  const points = Array.from(text);
  if (points.length <= KEY_PART) return text;
  return `${points.slice(0, 200).join('')}~${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
}

/** The normalized title as musical details and ignored titles store it (bounded like a key part). */
export function normalizedTitleKey(raw: string | null | undefined): string {
  return boundKey(normalizeText(raw));
}

/** The identity key of a row, or null when it names no track (no ISRC and no title). */
export function identityKey(
  row: { isrc: string | null; title: string | null; artist: string | null },
  normalize = normalizeText,
): string | null {
  const isrc = row.isrc ? normalizeIsrc(row.isrc) : null;
  if (isrc) return `isrc:${isrc}`;
  const title = normalize(row.title);
  if (!title) return null;
  return `ta:${boundKey(title)}\u001f${boundKey(normalize(row.artist))}`;
}

/** The identity key a row had before apostrophes and format characters were dropped. */
export function legacyIdentityKey(row: {
  isrc: string | null;
  title: string | null;
  artist: string | null;
}): string | null {
  return identityKey(row, legacyNormalizeText);
}
