// Statements exported in legacy encodings: each file is made here with iconv-lite from real titles
// in its script, and its titles must come out of the file reader exactly, with the encoding
// recorded; a file whose encoding is a guess among others is read as Windows-1252 and noted (the
// statement's flag), and an encoding the uploader names is read instead of any guess.
import { writeFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import iconv from 'iconv-lite';
import t from 'tap';
import { locateTable } from '../../workers/statementFile.ts';
import { namedEncoding } from '../../src/ingest/file/encoding.ts';

const dir = await mkdtemp(path.join(tmpdir(), 'royalty-encodings-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

/** Titles and artists as statements in each script carry them. */
export const TITLES: Record<string, [string, string][]> = {
  shift_jis: [
    ['夜の歌', '米津玄師'],
    ['千本桜', '初音ミク'],
    ['残酷な天使のテーゼ', '高橋洋子'],
    ['紅蓮華', 'LiSA'],
    ['夜に駆ける', 'YOASOBI'],
  ],
  'euc-jp': [
    ['夜の歌', '米津玄師'],
    ['千本桜', '初音ミク'],
    ['残酷な天使のテーゼ', '高橋洋子'],
    ['紅蓮華', 'LiSA'],
    ['夜に駆ける', 'YOASOBI'],
  ],
  'euc-kr': [
    ['봄날', '방탄소년단'],
    ['아리랑', '조용필'],
    ['강남스타일', '싸이'],
    ['좋은 날', '아이유'],
    ['밤편지', '아이유'],
  ],
  gb18030: [
    ['月亮代表我的心', '邓丽君'],
    ['甜蜜蜜', '邓丽君'],
    ['青花瓷', '周杰伦'],
    ['小幸运', '田馥甄'],
    ['告白气球', '周杰伦'],
  ],
  big5: [
    ['月亮代表我的心', '鄧麗君'],
    ['甜蜜蜜', '鄧麗君'],
    ['青花瓷', '周杰倫'],
    ['小幸運', '田馥甄'],
    ['告白氣球', '周杰倫'],
  ],
  'windows-1251': [
    ['Катюша', 'Лидия Русланова'],
    ['Калинка', 'Хор Александрова'],
    ['Подмосковные вечера', 'Владимир Трошин'],
    ['Группа крови', 'Кино'],
    ['Кукушка', 'Кино'],
  ],
  'windows-1250': [
    ['Žluté lázně', 'Václav Neckář'],
    ['Řeka lásky', 'Helena Vondráčková'],
    ['Szerelmes vagyok', 'Zorán'],
    ['Łatwopalni', 'Maryla Rodowicz'],
    ['Śpiewam', 'Anna Świątczak'],
  ],
  'windows-1252': [
    ['Café del Mar', 'Energy 52'],
    ['Déjà vu', 'Françoise Hardy'],
    ['Über den Wolken', 'Reinhard Mey'],
    ['L’amour à la plage', 'Niagara'],
    ['Œuvre €', 'Zoë'],
  ],
};

const statement = (rows: [string, string][]) =>
  `Title;Artist;ISRC;Amount\r\n${rows.map(([title, artist], i) => `${title};${artist};USRC1760783${i};${i + 1},50`).join('\r\n')}\r\n`;

async function locate(name: string, bytes: Buffer, encoding?: string) {
  const file = path.join(dir, name);
  await writeFile(file, bytes);
  const work = await mkdtemp(path.join(dir, 'work-'));
  return locateTable({
    sourcePath: file,
    fileName: name,
    workDir: work,
    ...(encoding !== undefined ? { encoding } : {}),
  });
}

for (const [encoding, rows] of Object.entries(TITLES)) {
  t.test(`${encoding}: the titles come out exact and the encoding is recorded`, async (t) => {
    const located = await locate(`${encoding}.csv`, iconv.encode(statement(rows), encoding));
    if (!located.ok) throw new Error(located.message);
    t.equal(located.encoding, encoding);
    t.same(located.header, ['Title', 'Artist', 'ISRC', 'Amount']);
    t.same(
      located.sampleRows.map((r) => [r[0], r[1]]),
      rows,
    );
    t.equal(located.readerNotes?.uncertainEncoding, undefined, 'no doubt about it');
  });
}

t.test('a Shift-JIS file is never read as Windows-1252 (夜の歌 was –é‚Ì‰Ì)', async (t) => {
  const located = await locate(
    'one-title.csv',
    iconv.encode('Title,Amount\n夜の歌,1.00\n', 'shift_jis'),
  );
  if (!located.ok) throw new Error(located.message);
  t.same([located.encoding, located.sampleRows[0]![0]], ['shift_jis', '夜の歌']);
});

t.test(
  'UTF-8 lines and Windows-1252 lines joined in one file are each decoded in their own',
  async (t) => {
    const bytes = Buffer.concat([
      Buffer.from('Title,Amount\nCafé,1.00\n'),
      iconv.encode('Crème brûlée,2.00\nDéjà vu,3.00\n', 'windows-1252'),
    ]);
    const located = await locate('mixed.csv', bytes);
    if (!located.ok) throw new Error(located.message);
    t.equal(located.encoding, 'utf-8+windows-1252');
    t.same(
      located.sampleRows.map((r) => r[0]),
      ['Café', 'Crème brûlée', 'Déjà vu'],
    );
  },
);

t.test(
  'a guess among others nearly as likely is noted with the candidates; the uploader names the encoding',
  async (t) => {
    // a single kanji reads as Big5 as well as Shift-JIS: too few bytes to tell
    const kanji = iconv.encode('Title,Amount\n夜,1.00\n', 'shift_jis');
    const located = await locate('short.csv', kanji);
    if (!located.ok) throw new Error(located.message);
    t.same(
      [located.encoding, located.readerNotes?.uncertainEncoding?.candidates.includes('shift_jis')],
      ['big5', true],
      JSON.stringify(located.readerNotes),
    );
    const named = await locate('short.csv', kanji, 'Shift_JIS');
    if (!named.ok) throw new Error(named.message);
    t.same(
      [named.encoding, named.sampleRows[0]![0], named.readerNotes],
      ['shift_jis', '夜', undefined],
    );
    // a Western file of one accented letter: Windows-1252, as before
    const short = await locate('zoe.csv', iconv.encode('Title,Amount\nZoë,1.00\n', 'windows-1252'));
    if (!short.ok) throw new Error(short.message);
    t.same([short.encoding, short.sampleRows[0]![0]], ['windows-1252', 'Zoë']);
  },
);

t.test(
  'a named encoding is read instead of the detected one, for every encoding and for UTF-8',
  async (t) => {
    for (const [encoding, rows] of Object.entries(TITLES)) {
      const located = await locate(
        `named-${encoding}.csv`,
        iconv.encode(statement(rows), encoding),
        encoding.toUpperCase(),
      );
      if (!located.ok) throw new Error(located.message);
      t.same(
        [located.encoding, located.sampleRows.map((r) => r[0])],
        [encoding, rows.map((r) => r[0])],
        encoding,
      );
    }
    // a UTF-8 file named as Windows-1252 is read so: the uploader's word is taken
    const utf8 = await locate(
      'named-utf8.csv',
      Buffer.from('Title,Amount\nCafé,1.00\n'),
      'windows-1252',
    );
    t.same(utf8.ok && [utf8.encoding, utf8.sampleRows[0]![0]], ['windows-1252', 'CafÃ©']);
  },
);

t.test('an encoding iconv-lite does not know is ENCODING_UNKNOWN', async (t) => {
  t.same(await locate('x.csv', Buffer.from('Title,Amount\nA,1\n'), 'klingon-8'), {
    ok: false,
    errorCode: 'ENCODING_UNKNOWN',
    message: 'The encoding "klingon-8" is not one the reader decodes.',
  });
  t.same(
    [
      'Shift_JIS',
      ' euc-kr ',
      'GB18030',
      'big5',
      'windows-1251',
      'utf-8',
      'no-such',
      '',
      'x'.repeat(41),
    ].map(namedEncoding),
    ['shift_jis', 'euc-kr', 'gb18030', 'big5', 'windows-1251', 'utf-8', null, null, null],
  );
});
