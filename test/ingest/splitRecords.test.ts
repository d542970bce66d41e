// The file reader's own splitter of delimited text (split.ts) against csv-parse, which it stands in
// for: on every text it splits, the same records of the same cells, each on the line the byte
// scanner gives it; on text quoted otherwise than RFC 4180 has it, it declines (csv-parse splits).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import t from 'tap';
import { RecordScanner } from '../../src/ingest/file/scan.ts';
import { splitRecords } from '../../src/ingest/file/split.ts';
import { projectPath } from '../../src/paths.ts';

type Newline = '\n' | '\r\n';

/** csv-parse with the file reader's options, and the line of each record from the byte scanner. */
function byCsvParse(buf: Buffer, delimiter: string, quote: boolean, newline: Newline) {
  const records = parse(buf, {
    delimiter,
    quote: quote ? '"' : false,
    escape: '"',
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: false,
    bom: false,
    record_delimiter: newline,
  }) as string[][];
  const lines: number[] = [];
  const scanner = new RecordScanner({
    delimiter: delimiter.charCodeAt(0),
    quote,
    maxRecordBytes: 1 << 30,
    baseLine: 7,
    onRecord: (r) => lines.push(r.line),
  });
  scanner.push(buf);
  scanner.finish();
  return records.map((cells, i) => ({ cells, line: lines[i] }));
}

const split = (text: string, delimiter = ',', quote = true, newline: Newline = '\n') =>
  splitRecords(text, { delimiter, quote, newline, baseLine: 7, maxRecordBytes: 1 << 20 });

t.test('splits as csv-parse does', async (t) => {
  const cases: [string, string, boolean, Newline][] = [
    ['a,b\n1,2\n', ',', true, '\n'],
    ['a,b\n1,2', ',', true, '\n'],
    ['a,b\n\n1,2\n\n', ',', true, '\n'],
    ['\n', ',', true, '\n'],
    ['', ',', true, '\n'],
    ['a,,\n,,\n', ',', true, '\n'],
    ['"a","b"\n"1,5","x""y"\n', ',', true, '\n'],
    ['"multi\nline",2\n3,"x\n\ny"\nlast,""\n', ',', true, '\n'],
    ['"a";"b"\r\n"1\r\n2";3\r\n4;5', ';', true, '\r\n'],
    ['a\tb\n12"\t"Live"\n', '\t', false, '\n'],
    ['a|b\n"q"|r\n', '|', true, '\n'],
    ['"","x"\n""""\n', ',', true, '\n'],
    ['Titre,Montant\nÉté,"1 234,50 €"\n', ',', true, '\n'],
  ];
  for (const [text, delimiter, quote, newline] of cases) {
    t.same(
      split(text, delimiter, quote, newline),
      byCsvParse(Buffer.from(text), delimiter, quote, newline),
      JSON.stringify(text),
    );
  }
});

t.test('splits the statement fixtures as csv-parse does', async (t) => {
  const dir = projectPath('fixtures', 'statements');
  let split = 0;
  for (const name of readdirSync(dir).filter((n) => /\.(csv|txt|tsv)$/i.test(n))) {
    const buf = readFileSync(path.join(dir, name));
    const text = buf.toString('utf8');
    const newline: Newline = text.includes('\r\n') ? '\r\n' : '\n';
    for (const delimiter of [',', ';', '\t']) {
      const mine = splitRecords(text, {
        delimiter,
        quote: true,
        newline,
        baseLine: 7,
        maxRecordBytes: 1 << 20,
      });
      if (!mine) continue;
      split++;
      t.same(mine, byCsvParse(buf, delimiter, true, newline), `${name} (${delimiter})`);
    }
  }
  t.ok(split > 20, `most fixtures are split (${split})`);
});

t.test('leaves to csv-parse what is not quoted as RFC 4180 has it', async (t) => {
  for (const text of ['a,b"c\n', '"ab"c,d\n', ' "a",b\n', '"never closed,1\n', 'a,b\r\n', 'a\rb\n'])
    t.equal(split(text), null, JSON.stringify(text));
  t.equal(split('a,b\n1,2\n', ',', true, '\r\n'), null, 'a bare LF in a CRLF file');
  t.equal(split('a;b\r\n1\r2;3\r\n', ';', true, '\r\n'), null, 'a lone CR in a CRLF file');
  t.equal(split('"a",b\nc\r\n', ',', true, '\r\n'), null, 'a bare LF after a quoted field');
});

t.test('leaves a record that may reach the size limit to csv-parse', async (t) => {
  const long = `${'x'.repeat(400)},y\n`;
  const o = { delimiter: ',', quote: true, newline: '\n', baseLine: 0 } as const;
  t.equal(splitRecords(long, { ...o, maxRecordBytes: 1000 }), null);
  t.equal(splitRecords(`"${long}"\n`, { ...o, maxRecordBytes: 1000 }), null);
  t.same(splitRecords(long, { ...o, maxRecordBytes: 2000 }), [
    { cells: ['x'.repeat(400), 'y'], line: 0 },
  ]);
});
