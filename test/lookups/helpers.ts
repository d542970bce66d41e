// Shared by the reference-data tests: raw values as ingestion reports them.
import type { Queryable } from '../../src/db/pool.ts';

export function data<T = any>(res: { ok: boolean; data?: T; error?: any }): T {
  if (!res.ok) throw new Error(`expected success, got ${JSON.stringify(res.error)}`);
  return res.data as T;
}

/**
 * One row per distinct raw value per statement, as the ingestion contract says; the statement
 * (with a rightsholder and an upload of its own) is recorded first when it is not there yet, as
 * the raw values go with their statement: processed, with its normalized rows, as analytics and
 * the missing-lookup reports count it.
 */
export async function reportRawValue(
  db: Queryable,
  v: {
    organizationId: string;
    statementId: string;
    kind: 'sales_type' | 'source';
    raw: string;
    rows: number;
    usd: string | null;
  },
): Promise<void> {
  await db.query(
    `WITH rh AS (INSERT INTO rightsholders (organization_id, name)
                 SELECT $1::uuid, 'Raw values ' || $2::text WHERE NOT EXISTS (SELECT 1 FROM statements WHERE id = $2::uuid) RETURNING id),
          up AS (INSERT INTO uploads (organization_id) SELECT $1::uuid FROM rh RETURNING id)
     INSERT INTO statements (id, organization_id, upload_id, rightsholder_id, file_name, content_type, object_key, status, normalized_key)
     SELECT $2::uuid, $1::uuid, up.id, rh.id, 'statement.csv', 'text/csv', 'orgs/' || $1::text || '/statements/' || $2::text || '/original/statement.csv', 'processed',
            'orgs/' || $1::text || '/statements/' || $2::text || '/normalized/statement.parquet'
     FROM rh, up`,
    [v.organizationId, v.statementId],
  );
  await db.query(
    `INSERT INTO statement_raw_values (organization_id, statement_id, kind, raw_value, row_count, usd_amount) VALUES ($1, $2, $3, $4, $5, $6)`,
    [v.organizationId, v.statementId, v.kind, v.raw, v.rows, v.usd],
  );
}
