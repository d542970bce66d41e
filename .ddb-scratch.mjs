import { DuckDBInstance } from '@duckdb/node-api';
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
for (const sql of process.argv.slice(2)) {
  try {
    const r = await c.runAndReadAll(sql);
    console.log(sql, '=>', JSON.stringify(r.getRowsJson()), r.columnTypes().map(String));
  } catch (e) {
    console.log(sql, 'ERR', e.message);
  }
}
