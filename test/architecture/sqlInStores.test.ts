// SQL lives in stores and domain modules, never in a procedure file nor a job task: a procedure
// validates, authorizes and calls the domain, a task calls the domain (docs/architecture.md).
// This reads every file of src/api and src/jobs/tasks and names each line that runs a query or
// holds SQL text.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { repoRoot } from '../setup/paths.ts';

/**
 * A query run on a database handle, or a template literal that starts as SQL does. Read over the
 * whole text, not line by line: a formatter may put `.query(` or the SQL under its handle.
 */
const SQL_TEXT = [
  /\b(pool|db|client|tx|connection)\s*\??\.query\s*[<(]/g,
  /`\s*(SELECT|INSERT INTO|UPDATE|DELETE FROM|WITH)\s/g,
];

export function sqlLines(source: string): number[] {
  const lines = source.split('\n');
  const lineOf = (offset: number) => source.slice(0, offset).split('\n').length;
  const found = SQL_TEXT.flatMap((re) => [...source.matchAll(re)].map((m) => lineOf(m.index)));
  return [...new Set(found)]
    .filter((n) => !lines[n - 1]!.trim().startsWith('//'))
    .sort((a, b) => a - b);
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? tsFiles(path.join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [path.join(dir, e.name)]
        : [],
  );
}

t.test('no procedure file of src/api runs a query or holds SQL', async (t) => {
  const apiDir = path.join(repoRoot, 'src', 'api');
  const files = tsFiles(apiDir);
  t.ok(files.length > 140, `read the procedure files (${files.length})`);
  const found = files.flatMap((file) =>
    sqlLines(readFileSync(file, 'utf8')).map((line) => `${path.relative(repoRoot, file)}:${line}`),
  );
  t.same(found, [], 'move these into a store of the domain they belong to');
});

t.test('no job task of src/jobs/tasks runs a query or holds SQL', async (t) => {
  const files = tsFiles(path.join(repoRoot, 'src', 'jobs', 'tasks'));
  t.ok(files.length >= 11, `read the task files (${files.length})`);
  const found = files.flatMap((file) =>
    sqlLines(readFileSync(file, 'utf8')).map((line) => `${path.relative(repoRoot, file)}:${line}`),
  );
  t.same(found, [], 'a task calls its domain: move these into a store');
});

t.test('the check catches a query and SQL text, not words in a description', async (t) => {
  t.same(sqlLines("const r = await ctx.deps.pool.query<{ n: number }>('SELECT 1');"), [1]);
  t.same(sqlLines('await db.query(sql, params);'), [1]);
  t.same(
    sqlLines('const q = `SELECT id FROM statements`;\nconst w = `UPDATE t SET a = 1`;'),
    [1, 2],
  );
  t.same(sqlLines("summary: 'Runs one SELECT over the table analytics_full_view',"), []);
  t.same(sqlLines('// db.query(...) is in the store'), []);
  // as a formatter may lay them out
  t.same(sqlLines('const r = await ctx.deps.pool\n  .query(\n    sql,\n  );'), [1]);
  t.same(sqlLines('const q = `\n  SELECT id\n  FROM statements`;'), [1]);
});
