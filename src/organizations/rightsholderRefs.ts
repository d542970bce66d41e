// Checks that rightsholder ids handed to organization settings belong to the organization.
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';

/**
 * RIGHTSHOLDER_NOT_FOUND naming the ids that are not rightsholders of the organization; with
 * `live`, soft-deleted ones count as missing too.
 */
export async function assertRightsholdersExist(
  db: Queryable,
  organizationId: string,
  ids: readonly string[],
  opts: { live: boolean },
): Promise<void> {
  if (ids.length === 0) return;
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM unnest($2::uuid[]) AS given (id)
     WHERE NOT EXISTS (SELECT 1 FROM rightsholders r
                       WHERE r.organization_id = $1 AND r.id = given.id AND (NOT $3 OR r.deleted_at IS NULL))`,
    [organizationId, ids, opts.live],
  );
  if (rows.length > 0) {
    const missing = rows.map((r) => r.id);
    throw new AppError('RIGHTSHOLDER_NOT_FOUND', `No rightsholder of the organization has the id ${missing.slice(0, 10).join(', ')}`, {
      details: { rightsholderIds: missing.slice(0, 100) },
    });
  }
}
