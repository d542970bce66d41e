// Title normalization: the comparison form of a raw statement title. Featured-artist credits are
// stripped, version tags are recognised in bracketed segments and " - " suffixes and set apart:
// every version of a song has the song's key (docs/songs.md). Each tag is either DISTINGUISHING
// (a different recording: live, remix, instrumental...) or not (a remaster is the same
// recording): the recording's signature, which products and enrichment keep apart.
import { romanizedKey, type JapaneseReader } from './romanize.ts';

export interface NormalizedTitle {
  /** the song's comparison key: the base without spaces (every version of the song has it) */
  key: string;
  /** the base title: lower case, diacritics folded, punctuation dropped, tokens joined by one space */
  base: string;
  /** every recognised version tag, `kind` or `kind:detail`, sorted */
  versionTags: string[];
  /** the featured artists of "feat." / "ft." / "featuring" / "(with ...)" credits, normalized */
  featured: string[];
}

/** Raw titles are cut to this many code points before normalization (a 100 KB title costs no more than a long one). */
export const MAX_TITLE_CHARS = 1000;

interface TagRule {
  kind: string;
  distinguishing: boolean;
  pattern: RegExp;
  /** how the tag's detail is taken from the match (none: the kind alone) */
  detail?: (m: RegExpExecArray) => string;
}

const FILLER = new Set([
  'version',
  'versions',
  'mix',
  'edit',
  'recording',
  'recorded',
  'the',
  'a',
  'an',
  'track',
  'take',
  'session',
  'sessions',
]);
const cleanDetail = (s: string | undefined): string =>
  (s ?? '')
    .split(' ')
    .filter((w) => w && !FILLER.has(w))
    .join(' ');

// Order matters: a rule removes what it matched before the next one looks (so "Stereo Mix" is
// not a remix and "Radio Edit" not a remixer's edit).
export const TAG_RULES: readonly TagRule[] = [
  {
    kind: 'remaster',
    distinguishing: false,
    pattern:
      /(?:\b\d{2,4} ?bit )?(?:\b\d{4} )?(?:digital(?:ly)? )?\bremaster\w*(?: version| edition| (?:in|en) \d{4}| \d{4})*/,
  },
  { kind: 'mono-stereo', distinguishing: false, pattern: /\b(?:mono|stereo)\b(?: mix| version)?/ },
  { kind: 're-recorded', distinguishing: true, pattern: /\bre ?record(?:ed|ing)?\b(?: version)?/ },
  {
    kind: 'edit',
    distinguishing: true,
    pattern: /\b(?:radio|single|short)\b (?:edit|version|mix)\b|^edit(?:ed)?$/,
  },
  {
    kind: 'extended',
    distinguishing: true,
    pattern: /\bextended\b(?: (?:version|edit|mix|play))?/,
  },
  {
    kind: 'sped up',
    distinguishing: true,
    pattern: /\b(?:sped|speed) up\b(?: version)?|\bnightcore\b/,
  },
  { kind: 'slowed', distinguishing: true, pattern: /\bslowed(?: down)?\b(?: (?:and )?reverb)?/ },
  { kind: 'instrumental', distinguishing: true, pattern: /\binstrumental\b(?: version)?/ },
  { kind: 'karaoke', distinguishing: true, pattern: /\bkaraoke\b.*$|\bin the style of\b.*$/ },
  { kind: 'a cappella', distinguishing: true, pattern: /\ba ?capp?ella\b(?: version)?/ },
  {
    kind: 'acoustic',
    distinguishing: true,
    pattern: /\b(?:acoustic|unplugged|acustico|acustica)\b(?: version)?/,
  },
  { kind: 'demo', distinguishing: true, pattern: /\bdemo\b(?: version)?/ },
  { kind: 'clean', distinguishing: true, pattern: /\bclean\b(?: version)?/ },
  { kind: 'explicit', distinguishing: false, pattern: /\bexplicit\b(?: version)?/ },
  {
    kind: 'live',
    distinguishing: true,
    pattern:
      /\b(?:live|en vivo|ao vivo|en directo|en concierto|in concert)\b(?: version| recording)?(?: (?:at|from|in|on|@|de|en))?(.*)$/,
    detail: (m) => cleanDetail(m[1]),
  },
  {
    kind: 'album version',
    distinguishing: false,
    pattern: /\b(?:album|lp|original|main) (?:version|mix)\b/,
  },
  { kind: 'bonus', distinguishing: false, pattern: /\bbonus(?: track)?\b/ },
  {
    kind: 'soundtrack',
    distinguishing: false,
    pattern: /^(?:taken )?from\b.*|\b(?:original )?(?:motion picture )?soundtrack\b|\bost\b/,
  },
  {
    kind: 'deluxe',
    distinguishing: false,
    pattern:
      /\bdeluxe\b(?: edition| version)?|(?:\b\d+(?:st|nd|rd|th)? )?\banniversary\b(?: edition| version)?|\bexpanded edition\b/,
  },
  {
    kind: 'remix',
    distinguishing: true,
    pattern: /^(.*?)\b(remix(?:ed)?|mix|rework|refix|edit|dub|vip|bootleg|flip)\b(?: by)?(.*)$/,
    detail: (m) =>
      cleanDetail(
        `${m[1]} ${['dub', 'vip', 'bootleg', 'flip'].includes(m[2]!) ? m[2] : ''} ${m[3]}`
          .replace(/\s+/g, ' ')
          .trim(),
      ),
  },
  {
    kind: 'version',
    distinguishing: true,
    pattern: /^(.*)\bversion\b(.*)$/,
    detail: (m) => cleanDetail(`${m[1]} ${m[2]}`.trim()),
  },
];

const DISTINGUISHING = new Map(TAG_RULES.map((r) => [r.kind, r.distinguishing]));
export const isDistinguishingTag = (tag: string): boolean =>
  DISTINGUISHING.get(tag.split(':')[0]!) ?? true;

const LETTER_FOLD: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  ł: 'l',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ı: 'i',
  ħ: 'h',
};
const FOLDABLE = /[ßæœøłđðþıħ]/g;
// Combining marks are dropped after Latin and Greek letters only: in Devanagari, Kana and other
// scripts a mark is part of the letter (が is not か).
const LATIN_MARKS = /([\p{Script=Latin}\p{Script=Greek}])\p{M}+/gu;

/** lower case, NFKC, diacritics of Latin and Greek folded, special letters spelled out. */
const ASCII = /^[\x20-\x7e]*$/;

export function fold(text: string): string {
  // printable ASCII has no diacritics or compatibility forms to fold: skip the three normalizations
  if (ASCII.test(text)) return text.toLowerCase();
  return text
    .normalize('NFKC')
    .toLowerCase()
    .normalize('NFD')
    .replace(LATIN_MARKS, '$1')
    .normalize('NFC')
    .replace(FOLDABLE, (c) => LETTER_FOLD[c]!);
}

/** folded, apostrophes removed, "&" as "and", every other non-letter-or-digit a space, collapsed. */
function words(text: string): string {
  return fold(text)
    .replace(/[\uFE00-\uFE0F\u200B-\u200D\u2060\uFEFF]/g, '')
    .replace(/['’‘`´]/g, '')
    .replace(/&/g, ' and ')
    .replace(/[^\p{L}\p{N}\p{M}]+/gu, ' ')
    .trim();
}

// Maps, not object literals: a title word such as `constructor` must find nothing (an object's
// lookup finds Object.prototype's members)
const ROMAN = new Map(
  Object.entries({
    i: '1',
    ii: '2',
    iii: '3',
    iv: '4',
    v: '5',
    vi: '6',
    vii: '7',
    viii: '8',
    ix: '9',
    x: '10',
  }),
);
const NUMBER_WORDS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
  'twenty',
];
const SYNONYMS = new Map(
  Object.entries({
    n: 'and',
    et: 'and',
    y: 'and',
    und: 'and',
    til: 'until',
    till: 'until',
    cause: 'because',
    cuz: 'because',
    cos: 'because',
    u: 'you',
    ur: 'your',
    o: 'of',
    nite: 'night',
    tonite: 'tonight',
    thru: 'through',
    luv: 'love',
    pt: 'part',
    pts: 'parts',
    vol: 'volume',
    ch: 'chapter',
    nr: 'no',
    num: 'no',
    mr: 'mister',
    dr: 'doctor',
    ...Object.fromEntries(NUMBER_WORDS.map((w, i) => [w, String(i)])),
  }),
);
const COUNTED = new Set([
  'part',
  'parts',
  'volume',
  'chapter',
  'act',
  'no',
  'movement',
  'book',
  'episode',
]);

/** A counted word glued to its number ("Pt1", "Vol.2" once the dot is gone): two tokens. */
const GLUED_NUMBER = /^(part|pt|vol|volume|ch|chapter|no|nr)(\d+)$/;

function baseTokens(text: string): string[] {
  const tokens = words(text)
    .split(' ')
    .filter(Boolean)
    .flatMap((w) => {
      const glued = GLUED_NUMBER.exec(w);
      return glued ? [glued[1]!, glued[2]!] : [w];
    })
    .map((w) => SYNONYMS.get(w) ?? w);
  // roman numerals count after "part", "volume"... and at the end of a title ("Interlude II")
  for (let i = 1; i < tokens.length; i++) {
    if (COUNTED.has(tokens[i - 1]!) || i === tokens.length - 1)
      tokens[i] = ROMAN.get(tokens[i]!) ?? tokens[i]!;
  }
  return tokens;
}

const LATIN = /\p{Script=Latin}/u;
const NON_LATIN_LETTER = /[^\P{L}\p{Script=Latin}]/u;

const CREDIT = /^(?:feat|ft|featuring|with|w|x|starring|avec|con|mit)\b\s*(.*)$/;
const INLINE_CREDIT = /\s(?:(?:feat\.?|ft\.?|featuring)\s+|w\/\s*)(\S.*)$/i;

function splitArtists(text: string): string[] {
  return text
    .split(/\s*(?:,|&|\+|\band\b|\bx\b|\by\b|\bet\b|\bund\b)\s*/i)
    .map(words)
    .filter(Boolean);
}

/** The tags of one segment (bracket content or dash suffix), or null when it holds none. */
function segmentTags(segment: string): string[] | null {
  let rest = ` ${words(segment)} `.replace(/\s+/g, ' ');
  const tags: string[] = [];
  for (const rule of TAG_RULES) {
    const m = rule.pattern.exec(rest.trim());
    if (!m) continue;
    const detail = rule.detail ? rule.detail(m) : '';
    // a bare "version" left over by the other rules ("Soundtrack Version") says nothing
    if (rule.kind === 'version' && !detail) continue;
    tags.push(detail ? `${rule.kind}:${detail}` : rule.kind);
    rest = ` ${rest.trim().replace(m[0], ' ')} `;
  }
  return tags.length > 0 ? tags : null;
}

type Segment =
  { kind: 'credit'; artists: string[] } | { kind: 'tags'; tags: string[] } | { kind: 'text' };

/** Segments repeat across a catalog ("feat. X", "2011 Remaster", "Radio Edit"): classified once. */
const classified = new Map<string, Segment>();
const MAX_CLASSIFIED = 50_000;

function classify(segment: string): Segment {
  let c = classified.get(segment);
  if (c === undefined) {
    if (classified.size >= MAX_CLASSIFIED) classified.clear();
    c = classifyOnce(segment);
    classified.set(segment, c);
  }
  return c;
}

function classifyOnce(segment: string): Segment {
  const w = words(segment);
  const credit = CREDIT.exec(w);
  if (credit && credit[1]) {
    const original = segment.trim().replace(/^\S+\s*/, '');
    return { kind: 'credit', artists: splitArtists(original) };
  }
  const tags = segmentTags(segment);
  return tags ? { kind: 'tags', tags } : { kind: 'text' };
}

function truncate(raw: string): string {
  if (raw.length <= MAX_TITLE_CHARS) return raw;
  return Array.from(raw.slice(0, MAX_TITLE_CHARS * 2))
    .slice(0, MAX_TITLE_CHARS)
    .join('');
}

export interface ParsedTitle extends NormalizedTitle {
  tokens: string[];
  /** the recording: the distinguishing tags joined, '' when none */
  signature: string;
  /** the kinds of the distinguishing tags (no details) joined */
  signatureKinds: string;
  /** the romanized comparison key of a title in another script (romanize.ts), '' for a Latin-script one */
  roman: string;
}

/** Normalization plus what the similarity needs (tokens, signature, romanization). */
export function parseTitle(raw: string, readJapanese?: JapaneseReader): ParsedTitle {
  let text = truncate(raw).normalize('NFKC').replace(/\s+/g, ' ').trim();
  const tags: string[] = [];
  const featured: string[] = [];
  const take = (segment: string): boolean => {
    const c = classify(segment);
    if (c.kind === 'credit') featured.push(...c.artists);
    else if (c.kind === 'tags') tags.push(...c.tags);
    return c.kind !== 'text';
  };
  // bracketed segments, innermost first
  const BRACKET = /[([{]([^()[\]{}]*)[)\]}]/g;
  // a Latin-script subtitle of a title written in another script is its translation or romanization
  const outside = text.replace(/[([{][^()[\]{}]*[)\]}]/g, ' ');
  const translated = (inner: string) =>
    NON_LATIN_LETTER.test(outside) &&
    !LATIN.test(outside) &&
    LATIN.test(inner) &&
    !NON_LATIN_LETTER.test(inner);
  for (let guard = 0; guard < 50 && BRACKET.test(text); guard++) {
    BRACKET.lastIndex = 0;
    text = text.replace(BRACKET, (_all, inner: string) =>
      take(inner) || translated(inner) ? ' ' : ` ${inner} `,
    );
  }
  text = text.replace(/[()[\]{}]/g, ' ');
  // " - " suffixes, last first; a suffix that is neither credit nor tags stays in the title
  const parts = text.split(/\s+[-–—]\s+|\s+[-–—](?=\s*$)/);
  const kept = [parts[0]!];
  for (const part of parts.slice(1)) if (!take(part)) kept.push(part);
  text = kept.join(' ');
  const inline = INLINE_CREDIT.exec(text);
  if (inline) {
    featured.push(...splitArtists(inline[1]!));
    text = text.slice(0, inline.index);
  }
  let tokens = baseTokens(text);
  if (tokens.length === 0) {
    // nothing but punctuation, symbols or emoji: compare the folded raw text itself
    const symbols = fold(truncate(raw)).replace(/\s+/g, ' ').trim();
    tokens = symbols ? symbols.split(' ') : [];
  }
  const versionTags = [...new Set(tags)].sort();
  const signature = versionTags.filter(isDistinguishingTag).join('+');
  const base = tokens.join(' ');
  const compact = tokens.join('');
  return {
    key: compact,
    base,
    versionTags,
    featured: [...new Set(featured)],
    tokens,
    signature,
    signatureKinds: [
      ...new Set(versionTags.filter(isDistinguishingTag).map((t) => t.split(':')[0]!)),
    ].join('+'),
    roman: romanizedKey(base, readJapanese),
  };
}

export function normalizeTitle(raw: string): NormalizedTitle {
  const { key, base, versionTags, featured } = parseTitle(raw);
  return { key, base, versionTags, featured };
}

/** Display titles are cut to this many code points. */
export const MAX_DISPLAY_CHARS = 500;

/**
 * The clean form of a raw title for display: featured credits and segments holding only
 * non-distinguishing tags (remaster, explicit, album version...) removed, distinguishing ones
 * kept as written (a recording's title) or removed too (`song`: the song's name), white space
 * collapsed.
 */
export function cleanTitle(raw: string, level: 'recording' | 'song' = 'recording'): string {
  const keep = (segment: string): boolean => {
    const c = classify(segment);
    if (c.kind === 'credit') return false;
    if (c.kind === 'tags') return level === 'recording' && c.tags.some(isDistinguishingTag);
    return true;
  };
  let text = truncate(raw).normalize('NFKC').replace(/\s+/g, ' ').trim();
  text = text.replace(/\s*[([{]([^()[\]{}]*)[)\]}]/g, (all, inner: string) =>
    keep(inner) ? all : '',
  );
  const parts = text.split(/(\s+[-–—]\s+)/);
  let out = parts[0]!;
  for (let i = 2; i < parts.length; i += 2) if (keep(parts[i]!)) out += parts[i - 1]! + parts[i]!;
  const inline = INLINE_CREDIT.exec(out);
  if (inline && inline.index > 0) out = out.slice(0, inline.index);
  out =
    out
      .replace(/\s+/g, ' ')
      .replace(/\s*[-–—]\s*$/, '')
      .trim() || text;
  const chars = Array.from(out);
  return chars.length > MAX_DISPLAY_CHARS
    ? `${chars.slice(0, MAX_DISPLAY_CHARS - 1).join('')}…`
    : out;
}

/** The version kinds of product_version, the first that applies naming a recording. */
export const VERSION_KINDS = [
  'remix',
  'live',
  'acoustic',
  'instrumental',
  'a cappella',
  'karaoke',
  'sped up',
  'slowed',
  'extended',
  'edit',
  'demo',
  're-recording',
  'language',
  'version',
  'clean',
  'remaster',
  'mono',
  'explicit',
  'original',
] as const;
export type VersionKind = (typeof VERSION_KINDS)[number];

const LANGUAGES = new Set([
  'english',
  'spanish',
  'espanol',
  'french',
  'francais',
  'german',
  'deutsch',
  'italian',
  'italiano',
  'portuguese',
  'portugues',
  'japanese',
  'korean',
  'chinese',
  'mandarin',
  'cantonese',
  'russian',
  'dutch',
  'swedish',
  'polish',
  'turkish',
  'arabic',
  'hindi',
  'tagalog',
]);
const KIND_OF_TAG = new Map<string, VersionKind>([
  ['re-recorded', 're-recording'],
  ['mono-stereo', 'mono'],
]);

/** The version kind of a raw title (product_version): `original` when it names none. */
export function versionKind(raw: string): VersionKind {
  const kinds = new Set(
    normalizeTitle(raw).versionTags.map((tag) => {
      const [kind, detail = ''] = tag.split(':') as [string, string?];
      if (kind === 'version')
        return detail.split(' ').some((w) => LANGUAGES.has(w))
          ? 'language'
          : /s$/.test(detail)
            ? 're-recording'
            : 'version';
      return KIND_OF_TAG.get(kind) ?? kind;
    }),
  );
  return VERSION_KINDS.find((k) => kinds.has(k)) ?? 'original';
}
