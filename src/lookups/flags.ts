// The unknown_sales_types / unknown_sources flags of processed statements follow the lookup
// tables. Ingestion sets them from the raw values no entry resolves; afterwards an entry created
// for such a value, or one deleted, changes what the flag should say. Once a minute
// (statement_lookup_flags, in the job runner's crontab), when the lookup tables changed since the
// last look, each processed statement whose flag no longer says what its raw values
// (statement_raw_values) give is brought up to date: the flag goes when every value resolves, its
// list changes, or it comes back. A flag the user resolved stays as they left it.
import { withTransaction, type Pool, type Queryable } from '../db/pool.ts';
import { keyRawValues, type RawKind } from './missing.ts';

interface FlagKind {
  kind: RawKind;
  flag: string;
  label: string;
  table: string;
}

export const LOOKUP_FLAG_KINDS: readonly FlagKind[] = [
  {
    kind: 'sales_type',
    flag: 'unknown_sales_types',
    label: 'Sales types',
    table: 'lookup_sales_types',
  },
  { kind: 'source', flag: 'unknown_sources', label: 'Sources', table: 'lookup_sources' },
];

/** The flag's message for its unknown values (as ingestion writes it). */
export function unknownLookupMessage(label: string, values: readonly string[]): string {
  return `${label} without a lookup entry: ${values.slice(0, 10).join(', ')}${values.length > 10 ? ', …' : ''}.`;
}

/** A statement's raw values of the kind that no lookup entry resolves, in byte order. */
const unknownSql = (
  k: FlagKind,
  statement: string,
) => `SELECT v.statement_id, array_agg(v.raw_value ORDER BY v.raw_value COLLATE "C") AS vals
  FROM statement_raw_values v JOIN lookup_raw_keys r ON r.kind = v.kind AND r.raw_value = v.raw_value
  WHERE v.kind = '${k.kind}' AND ${statement}
    AND NOT EXISTS (SELECT 1 FROM ${k.table} l WHERE l.original_normalized = r.raw_normalized AND r.raw_normalized <> '')
  GROUP BY v.statement_id`;

/** Processed statements whose unresolved flag of the kind is not what their raw values give. */
const staleSql = (k: FlagKind) => `WITH unknown AS (${unknownSql(k, 'true')}),
  flagged AS (
    SELECT statement_id, bool_or(resolved) AS resolved,
           (SELECT array_agg(x ORDER BY x COLLATE "C") FROM jsonb_array_elements_text((array_agg(details -> 'values'))[1]) AS x) AS vals
    FROM statement_flags WHERE kind = '${k.flag}' GROUP BY statement_id
  )
  SELECT s.id FROM statements s
  LEFT JOIN unknown u ON u.statement_id = s.id
  LEFT JOIN flagged f ON f.statement_id = s.id
  WHERE s.status = 'processed' AND s.deleted_at IS NULL AND NOT coalesce(f.resolved, false)
    AND ((u.statement_id IS NULL) <> (f.statement_id IS NULL) OR (u.statement_id IS NOT NULL AND u.vals[1:500] IS DISTINCT FROM f.vals))
  ORDER BY s.id`;

const FINGERPRINT_SQL = `SELECT (SELECT count(*)::text || ':' || coalesce(sum(xmin::text::bigint), 0)::text FROM lookup_sales_types)
  || '/' || (SELECT count(*)::text || ':' || coalesce(sum(xmin::text::bigint), 0)::text FROM lookup_sources) AS fingerprint`;

/** Brings one statement's flag of the kind up to date, under its row lock; whether it changed. */
async function syncStatement(pool: Pool, statementId: string, k: FlagKind): Promise<boolean> {
  return withTransaction(pool, async (db) => {
    const statement = await db.query<{ organization_id: string }>(
      `SELECT organization_id FROM statements WHERE id = $1 AND status = 'processed' AND deleted_at IS NULL FOR UPDATE`,
      [statementId],
    );
    const organizationId = statement.rows[0]?.organization_id;
    if (!organizationId) return false;
    const flags = await db.query<{ id: string; resolved: boolean }>(
      'SELECT id, resolved FROM statement_flags WHERE statement_id = $1 AND kind = $2 ORDER BY created_at, id',
      [statementId, k.flag],
    );
    if (flags.rows.some((f) => f.resolved)) return false;
    const unknown = await db.query<{ vals: string[] }>(unknownSql(k, 'v.statement_id = $1'), [
      statementId,
    ]);
    const values = unknown.rows[0]?.vals ?? [];
    const [kept, ...others] = flags.rows;
    // the flag keeps its id and whether it is shown while there is something to say
    await db.query('DELETE FROM statement_flags WHERE id = ANY ($1::uuid[])', [
      values.length > 0 ? others.map((f) => f.id) : flags.rows.map((f) => f.id),
    ]);
    if (values.length === 0) return true;
    const message = unknownLookupMessage(k.label, values);
    const details = JSON.stringify({ values: values.slice(0, 500) });
    if (kept) {
      await db.query('UPDATE statement_flags SET message = $2, details = $3 WHERE id = $1', [
        kept.id,
        message,
        details,
      ]);
    } else {
      await db.query(
        `INSERT INTO statement_flags (organization_id, statement_id, kind, severity, message, details) VALUES ($1, $2, $3, 'warning', $4, $5)`,
        [organizationId, statementId, k.flag, message, details],
      );
    }
    return true;
  });
}

/**
 * Brings every processed statement's unknown-lookup flags up to date with the lookup tables;
 * answers how many flags changed (null: the tables did not change since the last run, nothing
 * was read). `force` looks even so.
 */
export async function syncLookupFlags(
  pool: Pool,
  opts: { force?: boolean } = {},
): Promise<number | null> {
  const { rows } = await pool.query<{ fingerprint: string }>(FINGERPRINT_SQL);
  const fingerprint = rows[0]!.fingerprint;
  const last = await pool.query<{ fingerprint: string }>(
    'SELECT fingerprint FROM lookup_flag_state',
  );
  if (!opts.force && last.rows[0]?.fingerprint === fingerprint) return null;
  let changed = 0;
  for (const k of LOOKUP_FLAG_KINDS) {
    await keyRawValues(pool, k.kind);
    const stale = await pool.query<{ id: string }>(staleSql(k));
    for (const { id } of stale.rows) if (await syncStatement(pool, id, k)) changed++;
  }
  await saveFingerprint(pool, fingerprint);
  return changed;
}

async function saveFingerprint(db: Queryable, fingerprint: string): Promise<void> {
  await db.query(
    `INSERT INTO lookup_flag_state (id, fingerprint) VALUES (true, $1)
     ON CONFLICT (id) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, checked_at = clock_timestamp()`,
    [fingerprint],
  );
}
