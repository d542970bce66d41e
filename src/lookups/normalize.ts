// The one normalization of raw sales-type and source strings. Lookup tables are keyed by it
// (`original_normalized`), ingestion stores it next to the raw value, and analytics joins on it,
// so a lookup change shows everywhere without re-ingesting. Changing what it does changes every
// key: treat it as a data format.

/** Words that qualify a tier, plan or legal entity rather than name the source; dropped at the end. */
const TRAILING_NOISE: readonly string[] = [
  'ad supported',
  'ad funded',
  'hi fi',
  'pty ltd',
  'premium',
  'free',
  'ads',
  'ad',
  'adsupported',
  'subscription',
  'subscriptions',
  'subscriber',
  'subscribers',
  'paid',
  'family',
  'student',
  'students',
  'duo',
  'individual',
  'plan',
  'tier',
  'trial',
  'unlimited',
  'plus',
  'hifi',
  'hd',
  'lossless',
  'inc',
  'incorporated',
  'llc',
  'ltd',
  'limited',
  'gmbh',
  'ab',
  'sa',
  'sarl',
  'bv',
  'nv',
  'plc',
  'corp',
  'corporation',
  'co',
  'pty',
  'kk',
];

const NOISE_PHRASES = [...TRAILING_NOISE]
  .map((p) => p.split(' '))
  .sort((a, b) => b.length - a.length);

/**
 * Case, accents, punctuation and white space folded; runs of single letters joined ("B.M.I." →
 * "bmi"); no trailing noise: tiers, plans and company forms (see TRAILING_NOISE). The noise is
 * kept when nothing else is left, so "Free" stays "free".
 */
export function normalizeLookupKey(raw: string): string {
  const tokens = baseTokens(raw);
  let end = tokens.length;
  let stripped = true;
  while (stripped) {
    stripped = false;
    for (const phrase of NOISE_PHRASES) {
      if (phrase.length >= end) continue;
      if (phrase.every((word, i) => tokens[end - phrase.length + i] === word)) {
        end -= phrase.length;
        stripped = true;
        break;
      }
    }
  }
  const start = tokens[0] === 'the' && end > 1 ? 1 : 0;
  return tokens.slice(start, end).join(' ');
}

/** The tokens of a raw string before noise removal: what rules and phrase matching look at. */
export function baseTokens(raw: string): string[] {
  const folded = raw
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/['’`´]/g, '')
    .replace(/&/g, ' and ')
    .replace(/\+/g, ' plus ')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
  if (folded === '') return [];
  const tokens: string[] = [];
  let letters = '';
  for (const token of folded.split(' ')) {
    if (token.length === 1) {
      letters += token;
      continue;
    }
    if (letters) tokens.push(letters);
    letters = '';
    tokens.push(token);
  }
  if (letters) tokens.push(letters);
  return tokens;
}

/** A raw string as people should read it: trimmed, single-spaced, shouting turned to title case. */
export function tidyLabel(raw: string): string {
  const collapsed = raw.replace(/\s+/g, ' ').trim();
  if (collapsed !== collapsed.toUpperCase() || !/\p{Lu}/u.test(collapsed)) return collapsed;
  return collapsed
    .toLowerCase()
    .replace(/(^|[\s\-/(])(\p{L})/gu, (_m, sep: string, ch: string) => sep + ch.toUpperCase());
}
