// SQL text built from values (src/db/sql.ts): hostile identifiers and literals round-trip in
// PostgreSQL and DuckDB alike, and LIKE patterns match user text literally.
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import t from 'tap';
import {
  likeContains,
  likeEscape,
  likePrefix,
  quoteIdent,
  sortable,
  sqlLiteral,
} from '../../src/db/sql.ts';
import { serverUrl } from '../helpers/db.ts';

const HOSTILE = [
  "it's",
  '"quoted"',
  "'; DROP TABLE users; --",
  'back\\slash\\',
  '100% _done_',
  'Ünïcødé データ 🎵',
  'line\nbreak\ttab',
  "''",
  '""',
  '',
];

t.test('quoting and escaping, exactly', async (t) => {
  t.equal(quoteIdent('a"b'), '"a""b"');
  t.equal(sqlLiteral("it's"), "'it''s'");
  t.throws(() => sqlLiteral('a\u0000b'), /NUL/);
  t.equal(likeEscape('100%_\\'), '100\\%\\_\\\\');
  t.equal(likeContains('a%'), '%a\\%%');
  t.equal(likePrefix('a_'), 'a\\_%');
});

t.test(
  'a sort: its names for the enum, its ORDER BY in each direction, nothing else taken',
  async (t) => {
    const plain = sortable({ name: 'lower(x.name)', size: 'x.size' }, 'x.id');
    t.same(plain.keys, ['name', 'size']);
    t.equal(plain.orderBy('name', 'asc'), 'lower(x.name) ASC, x.id');
    t.equal(plain.orderBy('size', 'desc'), 'x.size DESC, x.id');
    t.equal(plain.orderBy('size', undefined), 'x.size ASC, x.id', 'ascending by default');
    const nulls = sortable({ at: 'x.at' }, 'x.id', { nullsLast: true, tiebreakFollows: true });
    t.equal(nulls.orderBy('at', 'desc'), 'x.at DESC NULLS LAST, x.id DESC');
    t.equal(nulls.orderBy('at', 'asc'), 'x.at ASC NULLS LAST, x.id ASC');
    for (const hostile of ['constructor', 'toString', 'x.id; DROP TABLE x', '__proto__']) {
      t.throws(() => plain.orderBy(hostile as 'name', 'asc'), /no sort named/, hostile);
    }
  },
);

t.test(
  'PostgreSQL reads back every literal and identifier; LIKE patterns match only the text itself',
  async (t) => {
    const client = new pg.Client({ connectionString: serverUrl() });
    await client.connect();
    t.teardown(() => client.end());
    const nonEmpty = HOSTILE.filter((v) => v !== '');
    const { rows } = await client.query(
      `SELECT ${HOSTILE.map((v, i) => `${sqlLiteral(v)} AS c${i}`).join(', ')}`,
    );
    t.same(Object.values(rows[0]), HOSTILE);
    const named = await client.query(
      `SELECT ${nonEmpty.map((v, i) => `${i} AS ${quoteIdent(v)}`).join(', ')}`,
    );
    t.same(
      named.fields.map((f) => f.name),
      nonEmpty,
    );
    for (const v of nonEmpty) {
      const { rows: m } = await client.query<{
        self: boolean;
        inside: boolean;
        prefix: boolean;
        other: boolean;
        widened: boolean;
      }>(
        `SELECT $1::text LIKE $2::text AS self, 'x' || $1::text || 'y' LIKE $2::text AS inside, $1::text || 'z' LIKE $3::text AS prefix,
              'x' || $1::text || 'y' LIKE $3::text AS other, $4::text LIKE $2::text AS widened`,
        [v, likeContains(v), likePrefix(v), v.replace(/[%_\\]/g, 'Q')],
      );
      // `widened`: the text with each pattern character replaced by another letter matches only when it had none
      t.same(
        m[0],
        { self: true, inside: true, prefix: true, other: false, widened: !/[%_\\]/.test(v) },
        JSON.stringify(v),
      );
    }
  },
);

t.test('DuckDB reads back every literal and identifier', async (t) => {
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  t.teardown(() => duck.closeSync());
  const reader = await duck.runAndReadAll(
    `SELECT ${HOSTILE.map((v, i) => `${sqlLiteral(v)} AS c${i}`).join(', ')}`,
  );
  t.same(reader.getRowsJS()[0], HOSTILE);
  const nonEmpty = HOSTILE.filter((v) => v !== '');
  const named = await duck.runAndReadAll(
    `SELECT ${nonEmpty.map((v, i) => `${i} AS ${quoteIdent(v)}`).join(', ')}`,
  );
  t.same(named.columnNames(), nonEmpty);
  const like = await duck.runAndReadAll(
    `SELECT 'a100% done' LIKE ${sqlLiteral(likeContains('100%'))} ESCAPE '\\', 'a100x done' LIKE ${sqlLiteral(likeContains('100%'))} ESCAPE '\\'`,
  );
  t.same(like.getRowsJS()[0], [true, false]);
});
