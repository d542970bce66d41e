// Forward-only migrations: numbered plain-SQL files in sql/migrations, one transaction each.
// A session-level advisory lock serializes processes that boot together, and the ledger row
// is written first inside each transaction.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Logger, runMigrations as runWorkerMigrations } from 'graphile-worker';
import type pg from 'pg';
import { projectPath } from '../paths.ts';

export const migrationsDir = projectPath('sql', 'migrations');
const MIGRATION_LOCK = 72_100_001;

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

export async function loadMigrations(dir = migrationsDir): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{6}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => ({
      id: Number.parseInt(file.slice(0, 6), 10),
      name: path.basename(file, '.sql'),
      sql: await readFile(path.join(dir, file), 'utf8'),
    })),
  );
}

/** A fingerprint of every migration, used to name migrated template databases in tests. */
export async function migrationsFingerprint(): Promise<string> {
  const hash = createHash('sha256');
  for (const m of await loadMigrations())
    hash.update(m.name).update('\0').update(m.sql).update('\0');
  return hash.digest('hex').slice(0, 12);
}

/** Applies the pending migrations; `onPending` hears of them before the first is applied. */
export async function migrate(
  pool: pg.Pool,
  onPending?: (names: string[]) => void,
): Promise<string[]> {
  const applied: string[] = [];
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const ledger = (
      await client.query<{ id: number; name: string }>(
        'SELECT id, name FROM schema_migrations ORDER BY id',
      )
    ).rows;
    const done = new Set(ledger.map((r) => r.id));
    const migrations = await loadMigrations();
    // a database migrated by a newer version (an older checkout on the same DATA_DIR): this
    // version's queries would run against a schema it does not know, so it does not start
    const known = new Set(migrations.map((m) => m.id));
    const unknown = ledger.filter((r) => !known.has(r.id)).map((r) => r.name);
    if (unknown.length > 0) {
      throw new Error(
        `the database was migrated by a newer version of the program (${unknown.join(', ')} unknown to this one): run that version or a later one`,
      );
    }
    const pending = migrations.filter((m) => !done.has(m.id));
    if (pending.length > 0) onPending?.(pending.map((m) => m.name));
    for (const m of pending) {
      await client.query('BEGIN');
      try {
        await client.query('INSERT INTO schema_migrations (id, name) VALUES ($1, $2)', [
          m.id,
          m.name,
        ]);
        await client.query(m.sql);
        await client.query('COMMIT');
        applied.push(m.name);
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${m.name} failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    client.release();
  }
  // graphile-worker keeps its own schema and ledger.
  await runWorkerMigrations({ pgPool: pool, logger: silentLogger() });
  return applied;
}

export function silentLogger(): Logger {
  return new Logger(() => () => {});
}
