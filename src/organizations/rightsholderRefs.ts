// Checks that rightsholder ids handed to organization settings belong to the organization.
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';

/**
 * RIGHTSHOLDER_NOT_FOUND naming the ids that are not rightsholders of the organization; with
 * `live`, soft-deleted ones count as missing too. The rightsholders found stay locked (KEY SHARE)
 * for the rest of the transaction: a rightsholder.deleteById running meanwhile waits for the
 * setting that names them to be written, and then takes the ids out of it, rather than leaving
 * the setting naming a rightsholder that is gone (a check-then-write race). One the delete
 * already removed is missing here.
 */
export async function assertRightsholdersExist(
  db: Queryable,
  organizationId: string,
  ids: readonly string[],
  opts: { live: boolean },
): Promise<void> {
  if (ids.length === 0) return;
  const { rows } = await db.query<{ id: string }>(
    `SELECT r.id FROM rightsholders r
     WHERE r.organization_id = $1 AND r.id = ANY ($2::uuid[]) AND (NOT $3 OR r.deleted_at IS NULL)
     ORDER BY r.id FOR KEY SHARE`,
    [organizationId, ids, opts.live],
  );
  const found = new Set(rows.map((r) => r.id));
  const missing = [...new Set(ids.map((id) => id.toLowerCase()))].filter((id) => !found.has(id));
  if (missing.length > 0) {
    throw new AppError(
      'RIGHTSHOLDER_NOT_FOUND',
      `No rightsholder of the organization has the id ${missing.slice(0, 10).join(', ')}`,
      {
        details: { rightsholderIds: missing.slice(0, 100) },
      },
    );
  }
}
