// Which legacy encoding a text file that is not UTF-8 is in: jschardet (a port of Python's
// chardet 7) chooses among the encodings statements are exported in, on the file's lines that are
// not UTF-8; decoding stays with iconv-lite. When another encoding that would read the bytes as
// other text is nearly as likely, the choice is uncertain: the file is read as Windows-1252 (or the
// detector's choice when that is not among the likely ones) and the statement is flagged, and the
// uploader can name the encoding (upload.uploadFile / uploadAction `encoding`).
import iconv from 'iconv-lite';

/** Words of Latin letters mixed with Cyrillic or Greek ones, and undecodable bytes, in a reading of the sample. */
function implausible(text: string): number {
  let n = 0;
  for (const word of text.match(/\p{L}+/gu) ?? []) {
    if (/\p{Script=Latin}/u.test(word) && /[\p{Script=Cyrillic}\p{Script=Greek}]/u.test(word)) n++;
  }
  for (const c of text) if (c === '\ufffd') n++;
  return n;
}

/**
 * The detector's candidates (its own names): Japanese, Korean, Chinese, Cyrillic, Central European,
 * Greek, Turkish, Western. Not Baltic (Windows-1257): it read short French and German text as well
 * as Windows-1252 (Noël as Noėl), and a Baltic file can name its encoding.
 */
const CANDIDATES = [
  'cp932',
  'euc_jis_2004',
  'cp949',
  'gb18030',
  'big5hkscs',
  'cp1250',
  'cp1251',
  'cp1252',
  'cp1253',
  'cp1254',
  'koi8-r',
];

/** Encodings of two bytes and more: a file in one is decoded whole in it (a pair of its bytes can be valid UTF-8 by chance). */
const MULTIBYTE = new Set(['shift_jis', 'euc-jp', 'euc-kr', 'gb18030', 'big5']);

/** A rival this close to the best guess (as a share of its confidence), reading other text, makes the guess uncertain. */
const RIVAL_SHARE = 0.85;
/**
 * Fewer bytes outside ASCII than this are too few to be sure of (a single kanji reads as Big5 as
 * well as Shift-JIS): the guess stands but is uncertain, with the rivals of a quarter of its confidence.
 */
const FEW_BYTES = 8;
const FEW_BYTES_RIVAL_SHARE = 0.25;

/** The most bytes of non-UTF-8 lines the detector reads. */
export const SAMPLE_BYTES = 64 * 1024;

const FALLBACK = 'windows-1252';

/** The name the service records for an encoding the detector names (`CP932` is shift_jis, `EUC-KR` and `CP949` euc-kr). */
function recordedName(detected: string): string | null {
  const key = detected.toLowerCase().replace(/[^a-z0-9]/g, '');
  const known: Record<string, string> = {
    cp932: 'shift_jis',
    shiftjis: 'shift_jis',
    eucjp: 'euc-jp',
    eucjis2004: 'euc-jp',
    cp949: 'euc-kr',
    euckr: 'euc-kr',
    gb18030: 'gb18030',
    gbk: 'gb18030',
    gb2312: 'gb18030',
    big5: 'big5',
    big5hkscs: 'big5',
    koi8r: 'koi8-r',
  };
  if (Object.hasOwn(known, key)) return known[key]!;
  const windows = /^(?:windows|cp)(125\d)$/.exec(key);
  if (windows) return `windows-${windows[1]}`;
  return null;
}

/**
 * A text encoding named by a user, as recorded (lower case, trimmed), when iconv-lite decodes it;
 * null otherwise (ENCODING_UNKNOWN).
 */
export function namedEncoding(name: string): string | null {
  const s = name.trim().toLowerCase();
  return s !== '' && s.length <= 40 && iconv.encodingExists(s) ? s : null;
}

export interface Detected {
  /** iconv-lite's name for it, as the statement's layout records it */
  encoding: string;
  /** decoded whole in it, never line by line with UTF-8 */
  multibyte: boolean;
  /** when other encodings were nearly as likely: they, the one read first */
  uncertain?: { candidates: string[] };
}

/** The legacy encoding of the non-UTF-8 lines in `sample` (see the file's comment). */
export async function detectLegacyEncoding(sample: Buffer): Promise<Detected> {
  // half a second to load the detector's model: only for files that are not UTF-8
  const { detectAll } = await import('jschardet');
  const results = detectAll(sample, { detectEncodings: CANDIDATES, minimumThreshold: 0 })
    .map((r) => ({
      encoding: r.encoding === null ? null : recordedName(r.encoding),
      confidence: r.confidence,
    }))
    .filter(
      (r): r is { encoding: string; confidence: number } =>
        r.encoding !== null && iconv.encodingExists(r.encoding),
    );
  // the detector's statistics favour Cyrillic for short Latin text (Crème read as Crиme): a reading
  // with words of two scripts, or bytes it cannot decode, is no candidate while another has fewer
  const texts = new Map(results.map((r) => [r.encoding, iconv.decode(sample, r.encoding)]));
  const badness = new Map(results.map((r) => [r.encoding, implausible(texts.get(r.encoding)!)]));
  const least = Math.min(...badness.values());
  const plausible = results.filter((r) => badness.get(r.encoding) === least);
  let best = plausible[0];
  if (!best || best.confidence <= 0)
    return { encoding: FALLBACK, multibyte: false, uncertain: { candidates: [FALLBACK] } };
  // rivals: likely encodings that read the sample as other text than the best guess does
  const text = texts.get(best.encoding)!;
  // Windows-1252 by its name when it reads the same text (Café is Café in Windows-1250 too)
  if (best.encoding !== FALLBACK && texts.get(FALLBACK) === text)
    best = plausible.find((r) => r.encoding === FALLBACK)!;
  const few = sample.reduce((n, b) => n + (b >= 0x80 ? 1 : 0), 0) < FEW_BYTES;
  const likely = [best.encoding];
  for (const r of plausible) {
    if (
      r.confidence < (few ? FEW_BYTES_RIVAL_SHARE : RIVAL_SHARE) * best.confidence ||
      likely.includes(r.encoding)
    )
      continue;
    if (texts.get(r.encoding) !== text) likely.push(r.encoding);
  }
  if (likely.length === 1)
    return { encoding: best.encoding, multibyte: MULTIBYTE.has(best.encoding) };
  const chosen = likely.includes(FALLBACK) ? FALLBACK : best.encoding;
  return {
    encoding: chosen,
    multibyte: MULTIBYTE.has(chosen),
    uncertain: { candidates: [chosen, ...likely.filter((e) => e !== chosen)] },
  };
}
