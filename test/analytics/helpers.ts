// Test data for analytics written directly, as ingestion would leave it: a processed statement
// row in PostgreSQL, its normalized Parquet (the layout of workers/normalize.ts) in the object
// store, and its exchange rates. The HTTP calls under test stay real.
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { normalizedColumns } from '../../workers/normalize.ts';
import type { TestServer } from '../helpers/server.ts';

type Column = (typeof normalizedColumns)[number];
export type FactRow = Partial<Record<Column, string | number | null>>;

const TYPES: Partial<Record<Column, string>> = {
  organization_id: 'UUID',
  statement_id: 'UUID',
  rightsholder_id: 'UUID',
  source_row: 'BIGINT',
  stmt_year: 'INTEGER',
  stmt_period: 'INTEGER',
  royalty_earnings: 'DECIMAL(38,12)',
  gross_royalty_earnings: 'DECIMAL(38,12)',
  units: 'DECIMAL(38,12)',
  sales_period_start: 'DATE',
  sales_period_end: 'DATE',
  territory_deduction: 'DECIMAL(38,12)',
  tax_deduction: 'DECIMAL(38,12)',
  royalty_rate: 'DECIMAL(38,12)',
};

/** The normalized Parquet bytes of these rows. */
export async function normalizedParquet(rows: FactRow[]): Promise<Buffer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'analytics-parquet-'));
  const instance = await DuckDBInstance.create(':memory:');
  const c = await instance.connect();
  try {
    await c.run(
      `CREATE TABLE stage (${normalizedColumns.map((col) => `"${col}" VARCHAR`).join(', ')})`,
    );
    const appender = await c.createAppender('stage');
    for (const row of rows) {
      for (const col of normalizedColumns) {
        const v = row[col];
        if (v === null || v === undefined) appender.appendNull();
        else appender.appendVarchar(String(v));
      }
      appender.endRow();
    }
    appender.closeSync();
    const file = path.join(dir, 'rows.parquet');
    const projection = normalizedColumns
      .map((col) => `CAST("${col}" AS ${TYPES[col] ?? 'VARCHAR'}) AS "${col}"`)
      .join(', ');
    await c.run(
      `COPY (SELECT ${projection} FROM stage ORDER BY CAST(source_row AS BIGINT)) TO '${file}' (FORMAT parquet)`,
    );
    return await readFile(file);
  } finally {
    c.closeSync();
    instance.closeSync();
    await rm(dir, { recursive: true, force: true });
  }
}

export interface SeedStatement {
  organizationId: string;
  rightsholderId: string;
  distributorId?: string | null;
  fileName?: string;
  customName?: string | null;
  stmt?: { year: number; period: number; cadence: 'M' | 'Q' | 'H' | 'Y' } | null;
  currency?: string;
  /** USD per unit of each currency; a currency left out has no rate */
  fx?: Record<string, string>;
  rows: FactRow[];
  status?: string;
}

/** A processed statement with these rows; returns its id. Rows inherit the statement's ids and period. */
export async function seedStatement(
  srv: Pick<TestServer, 'deps'>,
  s: SeedStatement,
): Promise<string> {
  const db = srv.deps.pool;
  const id = randomUUID();
  const upload = await db.query<{ id: string }>(
    'INSERT INTO uploads (organization_id) VALUES ($1) RETURNING id',
    [s.organizationId],
  );
  const key = `orgs/${s.organizationId}/statements/${id}/normalized-1.parquet`;
  const rows: FactRow[] = s.rows.map((r, i) => ({
    organization_id: s.organizationId,
    statement_id: id,
    rightsholder_id: s.rightsholderId,
    source_row: i + 1,
    stmt_year: s.stmt?.year ?? null,
    stmt_period: s.stmt?.period ?? null,
    stmt_cadence: s.stmt?.cadence ?? null,
    currency: s.currency ?? 'USD',
    ...r,
  }));
  await srv.deps.store.put(key, await normalizedParquet(rows));
  await db.query(
    `INSERT INTO statements (id, organization_id, upload_id, rightsholder_id, distributor_id, custom_name, file_name, content_type, object_key, status,
       stmt_year, stmt_period, stmt_cadence, currency, normalized_key, normalized_version, row_count, kept_rows, removed_rows, processed_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'text/csv', $8, $9, $10, $11, $12, $13, $14, 1, $15, $15, 0, now())`,
    [
      id,
      s.organizationId,
      upload.rows[0]!.id,
      s.rightsholderId,
      s.distributorId ?? null,
      s.customName ?? null,
      s.fileName ?? `${id}.csv`,
      `orgs/${s.organizationId}/statements/${id}/original`,
      s.status ?? 'processed',
      s.stmt?.year ?? null,
      s.stmt?.period ?? null,
      s.stmt?.cadence ?? null,
      s.currency ?? 'USD',
      key,
      rows.length,
    ],
  );
  for (const [currency, rate] of Object.entries(s.fx ?? { USD: '1' })) {
    await db.query(
      'INSERT INTO statement_fx (statement_id, currency, rate, rate_date) VALUES ($1, $2, $3, CURRENT_DATE)',
      [id, currency, rate],
    );
  }
  return id;
}

export async function seedRightsholder(
  srv: Pick<TestServer, 'deps'>,
  organizationId: string,
  name: string,
): Promise<string> {
  const { rows } = await srv.deps.pool.query<{ id: string }>(
    'INSERT INTO rightsholders (organization_id, name) VALUES ($1, $2) RETURNING id',
    [organizationId, name],
  );
  return rows[0]!.id;
}

export async function seedDistributor(
  srv: Pick<TestServer, 'deps'>,
  organizationId: string | null,
  name: string,
): Promise<string> {
  const { rows } = await srv.deps.pool.query<{ id: string }>(
    'INSERT INTO distributors (organization_id, name) VALUES ($1, $2) RETURNING id',
    [organizationId, name],
  );
  return rows[0]!.id;
}

export const VIEW = 'analytics_full_view';
export const m = (name: string) => `${VIEW}.${name}`;
