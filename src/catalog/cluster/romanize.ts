// Romanization of titles written in other scripts, so that a title and its romanized spelling
// are one song (`Звезда` / `Zvezda`, `봄날` / `Bomnal`, `夏の終わり` / `Natsu no Owari`).
// any-ascii (docs/decisions/title-transliteration.md) spells Cyrillic, Greek, Hangul, kana and
// the other scripts; Japanese kanji need their reading, which only a morphological analyzer
// knows: kuromoji with its dictionary, loaded on demand (seconds and ~300 MB the first time in a
// thread), and wanakana for the Hepburn spelling of the reading.
import { createRequire } from 'node:module';
import path from 'node:path';
import anyAscii from 'any-ascii';
import { toRomaji } from 'wanakana';

const HAN = /\p{Script=Han}/u;
const HANGUL = /\p{Script=Hangul}/u;
const KANA = /[\p{Script=Hiragana}\p{Script=Katakana}]/u;
const NON_LATIN_LETTER = /[^\P{L}\p{Script=Latin}]/u;

/** True when a title holds letters of a script other than Latin (it has a romanized form). */
export const hasOtherScript = (text: string): boolean => NON_LATIN_LETTER.test(text);
/** True when a title holds kanji / hanzi, whose reading any-ascii cannot know for Japanese. */
export const hasHan = (text: string): boolean => HAN.test(text);

/**
 * The comparison form of a romanized spelling: letters and digits only, long vowels written
 * once (`Tōkyō`, `Toukyou`, `Tokyo`), the particle spellings `wo`/`o` and `ha`/`wa` unified by
 * the reader, so that two romanizations of one title meet.
 */
export function romanKey(text: string): string {
  // Greek ου is written ou (any-ascii spells it oy)
  let ascii = anyAscii(text.replace(/ου/giu, 'ou'));
  // any-ascii spells Hangul syllable by syllable, each capitalized (사랑 SaLang): an initial ㄹ
  // after a vowel is r in the Revised Romanization people write (Sarang)
  if (HANGUL.test(text)) ascii = ascii.replace(/([aeiouy])L(?=[aeiouwy])/g, '$1r');
  return ascii
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '')
    .replace(/ou/g, 'o')
    .replace(/([aeiou])\1+/g, '$1');
}

/** A Japanese reading in katakana (one per token) as romanized words. */
export type JapaneseReader = (text: string) => string;

interface KuromojiToken {
  surface_form: string;
  reading?: string;
  pos: string;
}

const PARTICLES = new Map([
  ['は', 'wa'],
  ['へ', 'e'],
  ['を', 'o'],
]);

let reader: Promise<JapaneseReader> | null = null;

/** The kuromoji reader of this thread, built once (the dictionary is read from the package). */
export function japaneseReader(): Promise<JapaneseReader> {
  reader ??= (async () => {
    const require = createRequire(import.meta.url);
    const kuromoji = require('kuromoji') as {
      builder(o: { dicPath: string }): {
        build(cb: (err: Error | null, t: { tokenize(s: string): KuromojiToken[] }) => void): void;
      };
    };
    const dicPath = path.join(path.dirname(require.resolve('kuromoji/package.json')), 'dict');
    const tokenizer = await new Promise<{ tokenize(s: string): KuromojiToken[] }>(
      (resolve, reject) =>
        kuromoji.builder({ dicPath }).build((err, t) => (err ? reject(err) : resolve(t))),
    );
    return (text: string) =>
      tokenizer
        .tokenize(text)
        .map((t) => {
          if (t.pos === '助詞' && PARTICLES.has(t.surface_form))
            return PARTICLES.get(t.surface_form)!;
          const reading = t.reading && t.reading !== '*' ? t.reading : t.surface_form;
          return KANA.test(reading) ? toRomaji(reading) : reading;
        })
        .join(' ');
  })();
  reader.catch(() => (reader = null));
  return reader;
}

/** The romanized comparison key of a title in another script; '' for a Latin-script title. */
export function romanizedKey(text: string, readJapanese?: JapaneseReader): string {
  if (!hasOtherScript(text)) return '';
  return romanKey(readJapanese && hasHan(text) ? readJapanese(text) : text);
}

/** Japanese titles (kanji somewhere, kana somewhere) need the reader; Chinese ones read as any-ascii spells them. */
export function needsJapaneseReader(titles: readonly string[]): boolean {
  return titles.some((t) => HAN.test(t)) && titles.some((t) => KANA.test(t));
}
