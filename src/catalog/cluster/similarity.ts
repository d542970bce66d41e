// The similarity of two normalized titles: a character-weighted alignment of their tokens, where
// a token matches another exactly, or with a small number of typos (optimal string alignment
// distance) that depends on its length, and never when a number differs. Unmatched tokens count
// fully against the score, so "Love Me" / "Love Me Do" and "Part 1" / "Part 2" stay apart.
import { parseTitle, type ParsedTitle } from './normalize.ts';
import { romanKey } from './romanize.ts';

/** Two titles are the same song at or above this score. */
export const DEFAULT_THRESHOLD = 0.88;
/** Tokens compared per title (the rest of a pathological title still counts in the weights). */
const MAX_TOKENS = 48;
/** Tokens longer than this are compared exactly (a typo distance on 100 KB would be quadratic). */
const MAX_FUZZY_LENGTH = 64;
/** Matched tokens that appear in another order cost this factor ("Nights Summer" is suspicious). */
const ORDER_PENALTY = 0.8;

const NON_ALPHABETIC =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}]/u;
const DIGIT = /\p{N}/u;

// three rows of the distance table, reused: the distance runs on tokens of at most MAX_FUZZY_LENGTH
const ROWS = [
  new Int32Array(MAX_FUZZY_LENGTH + 2),
  new Int32Array(MAX_FUZZY_LENGTH + 2),
  new Int32Array(MAX_FUZZY_LENGTH + 2),
] as const;

/** Optimal string alignment distance (Levenshtein plus adjacent transposition), stopping above `max`; tokens of at most 64 code units. */
export function osaDistance(a: string, b: string, max: number): number {
  if (a === b) return 0;
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  if (n > MAX_FUZZY_LENGTH || m > MAX_FUZZY_LENGTH)
    throw new RangeError('osaDistance: strings longer than 64');
  let [prev2, prev, cur] = ROWS;
  for (let j = 0; j <= m; j++) prev[j] = j;
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    let rowMin = i;
    const ai = a.charCodeAt(i - 1);
    for (let j = 1; j <= m; j++) {
      const bj = b.charCodeAt(j - 1);
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (ai === bj ? 0 : 1));
      if (i > 1 && j > 1 && ai === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === bj)
        v = Math.min(v, prev2[j - 2]! + 1);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[m]!;
}

const ARTICLES = new Set(['the', 'a', 'an']);
/** Small words a title may drop without becoming another title ("Welcome to (the) Jungle"). */
const STOPWORDS = new Set(['the', 'a', 'an', 'of', 'to', 'in', 'on', 'at']);
/** Each unmatched token that is not a stopword multiplies the score by this: another word makes another title. */
const UNMATCHED_PENALTY = 0.85;
/** Each unmatched token holding a digit multiplies the score by this ("Interlude" / "Interlude II"). */
const UNMATCHED_NUMBER_PENALTY = 0.5;

/** Edits allowed between two tokens (optimal string alignment), by the shorter one's length. */
function allowedTypos(a: string, b: string): number {
  const len = Math.min(a.length, b.length);
  if (len <= 3 || Math.max(a.length, b.length) > MAX_FUZZY_LENGTH) return 0;
  if (DIGIT.test(a) || DIGIT.test(b) || NON_ALPHABETIC.test(a) || NON_ALPHABETIC.test(b)) return 0;
  return len <= 7 ? 1 : 2;
}

/** One substituted letter, the only edit that turns a short word into another word (Butter / Better, Bling / Blink). */
function isSubstitution(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) diff++;
  return diff === 1;
}

/** b is a with a plural or tense ending (Lover / Lovers, Love / Loved). */
function isInflection(a: string, b: string): boolean {
  const [s, l] = a.length < b.length ? [a, b] : [b, a];
  if (!l.startsWith(s)) return false;
  const ending = l.slice(s.length);
  return ending === 's' || ending === 'es' || ending === 'd' || ending === 'ed' || ending === 'r';
}

/**
 * 1 for equal tokens; 0.9 for two articles; 1 − d / (2 × longer length) within the typo
 * allowance: none up to 3 characters, in numbers and in CJK/Hangul/Thai; one edit up to 7
 * characters, two from 8. A substituted letter in a word of 4 letters, or of up to 7 letters
 * when the title is that one word (`single`), is another word (Home / Hone, Butter / Better);
 * with more words around it, it is a typo (Bad Romance / Bad Romence). A title of one word of up
 * to 5 letters is another word after any edit (Stay / Stray). `last`: the tokens end
 * their titles, where an inflection is another word (Bad Guy / Bad Guys, Lover / Lovers);
 * elsewhere it is a typo (Seven Nations Army).
 */
export function tokenSimilarity(a: string, b: string, last = false, single = false): number {
  if (a === b) return 1;
  if (ARTICLES.has(a) && ARTICLES.has(b)) return 0.9;
  if (Math.abs(a.length - b.length) > 2 || (last && isInflection(a, b))) return 0;
  const allowed = allowedTypos(a, b);
  if (allowed === 0) return 0;
  const d = osaDistance(a, b, allowed);
  if (d > allowed) return 0;
  const short = Math.min(a.length, b.length);
  if ((single || short <= 4) && short <= 7 && isSubstitution(a, b)) return 0;
  // a title of one short word is another word after any edit (Stay / Stray, Hope / Hoped)
  if (single && short <= 5) return 0;
  return 1 - d / (2 * Math.max(a.length, b.length));
}

const weight = (token: string): number => token.length + 1;

/**
 * The score of two token lists whose concatenations differ (0..1; equal ones, "Every Body" /
 * "Everybody", share a key and score 1 before this): Σ matched (wa + wb) × sim / Σ all weights,
 * weight = length + 1.
 */
function alignedSimilarity(a: readonly string[], b: readonly string[]): number {
  const A = a.slice(0, MAX_TOKENS);
  const B = b.slice(0, MAX_TOKENS);
  let total = 0;
  for (const t of a) total += weight(t);
  for (const t of b) total += weight(t);
  const pairs: { i: number; j: number; s: number }[] = [];
  for (let i = 0; i < A.length; i++) {
    for (let j = 0; j < B.length; j++) {
      const s = tokenSimilarity(
        A[i]!,
        B[j]!,
        i === A.length - 1 && j === B.length - 1,
        A.length === 1 && B.length === 1,
      );
      if (s > 0) pairs.push({ i, j, s });
    }
  }
  // greedy: best pairs first, then nearest positions (a repeated word aligns in order)
  pairs.sort(
    (x, y) => y.s - x.s || Math.abs(x.i - x.j) - Math.abs(y.i - y.j) || x.i - y.i || x.j - y.j,
  );
  const usedA = new Set<number>();
  const usedB = new Set<number>();
  const matched: { i: number; j: number }[] = [];
  let sum = 0;
  for (const p of pairs) {
    if (usedA.has(p.i) || usedB.has(p.j)) continue;
    usedA.add(p.i);
    usedB.add(p.j);
    matched.push(p);
    sum += p.s * (weight(A[p.i]!) + weight(B[p.j]!));
  }
  let score = sum / total;
  for (const [tokens, used] of [
    [A, usedA],
    [B, usedB],
  ] as const) {
    tokens.forEach((t, i) => {
      if (used.has(i) || STOPWORDS.has(t)) return;
      score *= DIGIT.test(t) ? UNMATCHED_NUMBER_PENALTY : UNMATCHED_PENALTY;
    });
  }
  matched.sort((x, y) => x.i - y.i);
  for (let k = 1; k < matched.length; k++) {
    if (matched[k]!.j < matched[k - 1]!.j) {
      score *= ORDER_PENALTY;
      break;
    }
  }
  return score;
}

/**
 * The same words in another order, small words aside (`Streets of Silver` / `Silver Streets`): not
 * the same title for the clustering (another order costs), but no other word either, as a typo or
 * an inflection would make (`Canyon Blues` / `Blue Canyon`).
 */
export function sameWordsReordered(a: ParsedTitle, b: ParsedTitle): boolean {
  const words = (p: ParsedTitle) =>
    p.tokens
      .filter((t) => !STOPWORDS.has(t))
      .sort()
      .join(' ');
  const x = words(a);
  return x !== '' && x === words(b);
}

/** A version detail (remixer, venue) this long or longer may hold one typo and stay the same credit. */
const MIN_TYPO_DETAIL = 5;

/** Two details of one version tag that name the same thing: equal, or one edit apart (Tiësto / Tiseto), never when a digit differs. */
function sameDetail(a: string, b: string): boolean {
  const x = a.replace(/ /g, '');
  const y = b.replace(/ /g, '');
  if (x === y) return true;
  if (
    Math.min(x.length, y.length) < MIN_TYPO_DETAIL ||
    Math.max(x.length, y.length) > MAX_FUZZY_LENGTH
  )
    return false;
  if (DIGIT.test(x) || DIGIT.test(y)) return false;
  return osaDistance(x, y, 1) <= 1;
}

/**
 * Two recording signatures (normalize.ts `signature`: distinguishing tags joined by `+`) that name
 * one recording: the same tag kinds, each detail equal or one typo apart (`remix:tiesto` /
 * `remix:tisto`), while another remixer (`remix:alesso`) stays another recording.
 */
export function sameSignature(a: string, b: string): boolean {
  if (a === b) return true;
  const x = a.split('+');
  const y = b.split('+');
  if (x.length !== y.length) return false;
  return x.every((tag, i) => {
    const [kindA, detailA = ''] = tag.split(/:(.*)/s) as [string, string?];
    const [kindB, detailB = ''] = y[i]!.split(/:(.*)/s) as [string, string?];
    return kindA === kindB && sameDetail(detailA, detailB);
  });
}

/** The romanized key of a title for comparison with one in another script. */
const romanOf = (p: ParsedTitle): string => p.roman || romanKey(p.key);

/**
 * The similarity of two parsed titles as songs: 1 for one key, or for a title in another script
 * and its romanization (`Звезда` / `Zvezda`); else their token score. Version tags do not count:
 * every version of a song is the song.
 */
export function parsedSimilarity(a: ParsedTitle, b: ParsedTitle): number {
  if (a.key === b.key) return 1;
  if ((a.roman || b.roman) && romanOf(a) !== '' && romanOf(a) === romanOf(b)) return 1;
  return alignedSimilarity(a.tokens, b.tokens);
}

/** 0..1 on raw titles; two titles are the same song when this is ≥ the threshold. */
export function titleSimilarity(a: string, b: string): number {
  return parsedSimilarity(parseTitle(a), parseTitle(b));
}
