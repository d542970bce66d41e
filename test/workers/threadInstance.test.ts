// The DuckDB instance a worker thread keeps for its tasks (workers/duckdb.ts, withThreadInstance):
// reused by the next statement, nothing of one statement left for the next, and a failed task's
// instance never reused.
import { readFile } from 'node:fs/promises';
import t from 'tap';
import {
  catalogListings,
  connectionsOpened,
  instancesCreated,
  withThreadInstance,
} from '../../workers/duckdb.ts';
import { loadMappingLibrary } from '../../src/ingest/library.ts';
import { normalizeFile, parquetRows } from '../helpers/normalize.ts';

const believe = (await loadMappingLibrary()).find((e) => e.key === 'believe')!;
const text = await readFile(new URL('../../fixtures/statements/believe.csv', import.meta.url));
const settings = { threads: 2, memoryLimitMb: 256 };
const noPrepare = async () => {};

/** What a task would find in the instance: its objects (temporary or not) and its settings. */
async function catalogSeen() {
  return withThreadInstance(settings, noPrepare, async (instance) => {
    const c = await instance.connect();
    try {
      const read = async (sql: string) => (await c.runAndReadAll(sql)).getRowsJson();
      return {
        tables: await read('SELECT table_name FROM duckdb_tables() ORDER BY 1'),
        types: await read(
          `SELECT type_name FROM duckdb_types() WHERE NOT internal AND database_name = 'memory' ORDER BY 1`,
        ),
        settings: await read(
          `SELECT name, value FROM duckdb_settings() WHERE name IN ('threads', 'memory_limit') ORDER BY 1`,
        ),
      };
    } finally {
      c.closeSync();
    }
  });
}

t.test('statements one after another reuse the instance and leave nothing behind', async (t) => {
  const first = await normalizeFile(t, text, believe.fields, { fileName: 'believe.csv' });
  const made = instancesCreated();
  const listed = catalogListings();
  const opened = connectionsOpened();
  const second = await normalizeFile(t, text, believe.fields, { fileName: 'believe.csv' });
  t.equal(connectionsOpened(), opened + 1, 'a small statement, never split: one connection');
  // (the second would fail on the first's value types, made again under the same names, if they were left)
  t.equal(instancesCreated(), made, 'the second statement made no instance');
  t.equal(catalogListings(), listed, 'its objects all temporary: the catalog not listed after it');
  t.equal(second.out.keptRows, 30);
  t.equal(second.out.net, first.out.net);
  t.equal(second.out.net, '730.217419961500');
  t.same(
    await parquetRows(second.outPath, 'source_row, royalty_earnings, country'),
    await parquetRows(first.outPath, 'source_row, royalty_earnings, country'),
  );
  const seen = await catalogSeen();
  t.same(seen.tables, [], 'no table of the statements is left');
  t.same(seen.types, [], 'no value type of the statements is left');
  t.equal(instancesCreated(), made, 'still the same instance');
});

t.test('a field of many values makes its value type, dropped after the statement', async (t) => {
  // more distinct ISRCs than a literal ENUM takes (lookups.ts), each read to another value (upper
  // case): the field's type is made in the catalog
  const [header, row] = text.toString('utf8').split('\n');
  const rows = Array.from({ length: 2_100 }, (_, i) =>
    row!.replace('FRCGB2494705', `frcgb24${String(i).padStart(5, '0')}`),
  );
  const content = [header, ...rows].join('\n');
  const first = await normalizeFile(t, content, believe.fields, { fileName: 'believe.csv' });
  const made = instancesCreated();
  const listed = catalogListings();
  // (the second would fail on the first's type, made again under the same name, if it were left)
  const second = await normalizeFile(t, content, believe.fields, { fileName: 'believe.csv' });
  t.equal(instancesCreated(), made, 'the second statement made no instance');
  t.equal(catalogListings(), listed + 1, 'the catalog listed after it, to drop its type');
  t.equal(second.out.keptRows, 2_100);
  t.same(
    await parquetRows(second.outPath, 'isrc'),
    rows.map((_, i) => [`FRCGB24${String(i).padStart(5, '0')}`]),
  );
  t.equal(second.out.net, first.out.net);
  const seen = await catalogSeen();
  t.same(seen.types, [], 'no value type of the statements is left');
  t.same(seen.tables, []);
});

t.test(
  'a task that tells of objects beyond its connections has them dropped after it',
  async (t) => {
    await catalogSeen();
    const made = instancesCreated();
    const listed = catalogListings();
    await withThreadInstance(settings, noPrepare, async (instance, catalog) => {
      const c = await instance.connect();
      try {
        catalog.objectsMade();
        await c.run('CREATE TABLE shared_rows AS SELECT range AS n FROM range(3)');
        await c.run('CREATE TEMP TABLE own_rows AS SELECT range AS n FROM range(3)');
      } finally {
        c.closeSync();
      }
    });
    t.equal(catalogListings(), listed + 1, 'listed once, after the task');
    // a task with temporary tables alone: they go with its connection, nothing is listed
    await withThreadInstance(settings, noPrepare, async (instance) => {
      const c = await instance.connect();
      try {
        await c.run('CREATE TEMP TABLE own_rows AS SELECT range AS n FROM range(3)');
      } finally {
        c.closeSync();
      }
    });
    t.equal(catalogListings(), listed + 1, 'not listed after a task of temporary tables');
    const seen = await catalogSeen();
    t.same(seen.tables, [], 'neither table is left');
    t.equal(instancesCreated(), made, 'the same instance all along');
  },
);

t.test('a failed task closes the instance: its changes never reach the next', async (t) => {
  await catalogSeen();
  const before = instancesCreated();
  await t.rejects(
    withThreadInstance(settings, noPrepare, async (instance) => {
      const c = await instance.connect();
      try {
        await c.run('SET threads = 1');
        await c.run(`SET memory_limit = '64MB'`);
        await c.run('CREATE TABLE half_made AS SELECT range AS n FROM range(100000)');
        await c.run("CREATE TYPE e_left AS ENUM ('a', 'b')");
        throw new Error('the task failed halfway');
      } finally {
        c.closeSync();
      }
    }),
    { message: 'the task failed halfway' },
  );
  const seen = await catalogSeen();
  t.equal(instancesCreated(), before + 1, 'the next task has a new instance');
  t.same(seen.tables, []);
  t.same(seen.types, []);
  t.same(seen.settings, [
    ['memory_limit', '244.1 MiB'],
    ['threads', '2'],
  ]);
});

t.test('each task runs with its own settings, set only when they differ', async (t) => {
  const seenWith = (s: typeof settings) =>
    withThreadInstance(s, noPrepare, async (instance) => {
      const c = await instance.connect();
      try {
        return (
          await c.runAndReadAll(
            `SELECT name, value FROM duckdb_settings() WHERE name IN ('threads', 'memory_limit', 'disabled_optimizers') ORDER BY 1`,
          )
        ).getRowsJson();
      } finally {
        c.closeSync();
      }
    });
  await catalogSeen();
  const made = instancesCreated();
  const small = { threads: 1, memoryLimitMb: 128, disabledOptimizers: ['expression_rewriter'] };
  t.same(await seenWith(small), [
    ['disabled_optimizers', 'expression_rewriter'],
    ['memory_limit', '122.0 MiB'],
    ['threads', '1'],
  ]);
  t.same(await seenWith(small), [
    ['disabled_optimizers', 'expression_rewriter'],
    ['memory_limit', '122.0 MiB'],
    ['threads', '1'],
  ]);
  t.same(await seenWith(settings), [
    ['disabled_optimizers', ''],
    ['memory_limit', '244.1 MiB'],
    ['threads', '2'],
  ]);
  t.equal(instancesCreated(), made, 'one instance all along');
});

t.test('a task beyond its memory limit spills to a directory of the instance', async (t) => {
  const sorted = await withThreadInstance(
    { threads: 1, memoryLimitMb: 32 },
    noPrepare,
    async (instance) => {
      const c = await instance.connect();
      try {
        await c.run(
          `CREATE TEMP TABLE big AS SELECT range AS n, md5(range::VARCHAR) AS h FROM range(1000000) ORDER BY h`,
        );
        return (await c.runAndReadAll('SELECT count(*), count(DISTINCT h) FROM big')).getRowsJson();
      } finally {
        c.closeSync();
      }
    },
  );
  t.same(sorted, [['1000000', '1000000']]);
});

t.test('a statement stopped by its time budget does not poison the next', async (t) => {
  const stopped = normalizeFile(t, text, believe.fields, {
    fileName: 'believe.csv',
    extra: { timeBudgetMs: 1 },
  });
  await t.rejects(stopped, {
    message: 'normalizing the statement took longer than its time budget',
  });
  const next = await normalizeFile(t, text, believe.fields, { fileName: 'believe.csv' });
  t.equal(next.out.keptRows, 30);
  t.equal(next.out.net, '730.217419961500');
});
