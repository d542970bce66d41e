// One database per test file, cloned from a migrated template database (fast, isolated,
// parallel-safe). The template's name carries a fingerprint of the migrations.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { migrate, migrationsFingerprint } from '../../src/db/migrate.ts';
import { createPool } from '../../src/db/pool.ts';
import { databaseUrlFile } from '../setup/paths.ts';

const TEMPLATE_LOCK = 72_100_099;

export function serverUrl(): string {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  if (existsSync(databaseUrlFile)) return readFileSync(databaseUrlFile, 'utf8').trim();
  throw new Error('no test database: run the tests with `npm test` (or set DATABASE_URL)');
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function ensureTemplate(admin: pg.Client, url: string): Promise<string> {
  const template = `royalty_tpl_${await migrationsFingerprint()}`;
  await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      template,
    ]);
    if (!rowCount) {
      // templates of older migrations are of no further use
      const old = await admin.query<{ datname: string }>(
        `SELECT datname FROM pg_database WHERE datname LIKE 'royalty_tpl_%'`,
      );
      for (const { datname } of old.rows)
        await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
      const building = `${template}_building`;
      await admin.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
      await admin.query(`CREATE DATABASE "${building}"`);
      const pool = createPool(withDatabase(url, building), 2);
      try {
        await migrate(pool);
      } finally {
        await pool.end();
      }
      await admin.query(`ALTER DATABASE "${building}" RENAME TO "${template}"`);
    }
  } finally {
    await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
  }
  return template;
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const url = serverUrl();
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const template = await ensureTemplate(admin, url);
    const name = `royalty_test_${randomBytes(6).toString('hex')}`;
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
    return {
      url: withDatabase(url, name),
      name,
      async drop() {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        try {
          await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        } finally {
          await c.end();
        }
      },
    };
  } finally {
    await admin.end();
  }
}
