// Joining Parquet parts without decoding them: the joined file must read as the parts read one
// after the other, through statistics, dictionaries and bloom filters, whose byte offsets move.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import t from 'tap';
import { concatParquet, decodeStruct, encodeStruct } from '../../workers/parquetConcat.ts';

async function setup(t: { teardown(fn: () => unknown): void }) {
  const dir = await mkdtemp(path.join(tmpdir(), 'royalty-concat-'));
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const duck = await instance.connect();
  t.teardown(async () => {
    duck.closeSync();
    instance.closeSync();
    await rm(dir, { recursive: true, force: true });
  });
  const rows = async (sql: string) =>
    (await duck.runAndReadAll(sql))
      .getRows()
      .map((r) => r.map((v) => (v === null ? null : String(v))));
  // a part of rows from..to: a constant column, a dictionary column (bloom filter), a decimal, a date
  const part = async (name: string, from: number, to: number) => {
    const file = path.join(dir, name);
    await duck.run(`COPY (SELECT i AS source_row, 'org' AS organization, 'ISRC' || (i % 97)::VARCHAR || CASE WHEN i >= 150000 THEN 'B' ELSE 'A' END AS isrc,
        (i * 7 % 1000)::DECIMAL(38,12) / 100 AS amount, DATE '2024-01-01' + (i % 60)::INTEGER AS day
        FROM range(${from}, ${to}) r(i)) TO '${file}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`);
    return file;
  };
  return { dir, duck, rows, part };
}

t.test('the footer is read and written back byte for byte', async (t) => {
  const { part } = await setup(t);
  const file = await part('a.parquet', 0, 1000);
  const bytes = await readFile(file);
  const length = bytes.readUInt32LE(bytes.length - 8);
  const footer = bytes.subarray(bytes.length - 8 - length, bytes.length - 8);
  t.ok(encodeStruct(decodeStruct(footer)).equals(footer));
});

t.test(
  'two parts joined read as one file: every row in order, with its statistics, dictionaries and bloom filters',
  async (t) => {
    const { dir, rows, part } = await setup(t);
    const a = await part('a.parquet', 0, 150_000);
    const b = await part('b.parquet', 150_000, 400_000);
    const joined = path.join(dir, 'joined.parquet');
    await concatParquet([a, b], joined);
    const [count, misplaced, sum] = (
      await rows(
        `SELECT count(*), count(*) FILTER (WHERE source_row <> file_row_number), sum(amount) FROM read_parquet('${joined}', file_row_number=true)`,
      )
    )[0]!;
    t.equal(count, '400000');
    t.equal(misplaced, '0', 'the n-th row is the n-th row of the parts');
    t.equal(sum, (await rows(`SELECT sum(amount) FROM read_parquet(['${a}', '${b}'])`))[0]![0]);
    t.same(
      await rows(
        `SELECT count(*) FROM (SELECT * FROM read_parquet('${joined}') EXCEPT ALL SELECT * FROM read_parquet(['${a}', '${b}']))`,
      ),
      [['0']],
    );
    // filters that DuckDB answers from the row groups' statistics and bloom filters: wrong offsets
    // would read other bytes as the filter and lose rows of the second part
    t.same(
      await rows(`SELECT count(*) FROM read_parquet('${joined}') WHERE isrc = 'ISRC5B'`),
      await rows(`SELECT count(*) FROM read_parquet('${b}') WHERE isrc = 'ISRC5B'`),
    );
    t.same(
      await rows(
        `SELECT count(*), min(source_row) FROM read_parquet('${joined}') WHERE source_row >= 399990`,
      ),
      [['10', '399990']],
    );
    t.same(
      await rows(
        `SELECT count(*) FROM read_parquet('${joined}') WHERE day = DATE '2024-01-05' AND isrc LIKE '%A'`,
      ),
      await rows(`SELECT count(*) FROM read_parquet('${a}') WHERE day = DATE '2024-01-05'`),
    );
    const groups = await rows(
      `SELECT row_group_id, row_group_num_rows FROM parquet_metadata('${joined}') WHERE column_id = 0 ORDER BY 1`,
    );
    t.same(
      groups.map((g) => g[1]),
      [
        ...(await rows(
          `SELECT row_group_num_rows FROM parquet_metadata('${a}') WHERE column_id = 0 ORDER BY row_group_id`,
        )),
        ...(await rows(
          `SELECT row_group_num_rows FROM parquet_metadata('${b}') WHERE column_id = 0 ORDER BY row_group_id`,
        )),
      ].map((g) => g[0]),
    );
  },
);

t.test(
  'an empty part adds nothing; parts of another schema and files that are not Parquet are refused',
  async (t) => {
    const { dir, duck, rows, part } = await setup(t);
    const a = await part('a.parquet', 0, 5);
    const empty = await part('empty.parquet', 5, 5);
    const joined = path.join(dir, 'joined.parquet');
    await concatParquet([a, empty], joined);
    t.same(await rows(`SELECT count(*), max(source_row) FROM read_parquet('${joined}')`), [
      ['5', '4'],
    ]);
    const other = path.join(dir, 'other.parquet');
    await duck.run(`COPY (SELECT 1 AS x) TO '${other}' (FORMAT parquet)`);
    await t.rejects(concatParquet([a, other], path.join(dir, 'bad.parquet')), /another schema/);
    const text = path.join(dir, 'text.parquet');
    await writeFile(text, 'not a parquet file at all');
    await t.rejects(
      concatParquet([a, text], path.join(dir, 'bad2.parquet')),
      /not a plain Parquet file/,
    );
  },
);
