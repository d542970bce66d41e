// The SQL of catalog blocks as the catalog procedures use them: found within the caller's reach,
// and held for the length of a change.
import { inRightsholderScope } from '../access/dataAccess.ts';
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import type { Caller } from './musicalDetails.ts';

export interface VisibleBlock {
  id: string;
  rightsholderId: string;
  rightsholderName: string;
}

/** The block, if the caller may see it: in the organization and within their data access; BLOCK_NOT_FOUND otherwise. */
export async function visibleBlock(
  db: Queryable,
  caller: Caller,
  blockId: string,
): Promise<VisibleBlock> {
  const { rows } = await db.query<VisibleBlock>(
    `SELECT b.id, b.rightsholder_id AS "rightsholderId", r.name AS "rightsholderName"
     FROM catalog_blocks b JOIN rightsholders r ON r.id = b.rightsholder_id
     WHERE b.id = $1 AND b.organization_id = $2 AND ${inRightsholderScope('b.rightsholder_id', '$3')}`,
    [blockId, caller.organizationId, caller.rightsholderScope],
  );
  if (!rows[0]) throw new AppError('BLOCK_NOT_FOUND');
  return rows[0];
}

/**
 * Locks the block's row until the transaction ends: one refresh or change of its details,
 * clusters, products or queue at a time. False when the block is gone.
 */
export async function lockBlock(db: Queryable, blockId: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM catalog_blocks WHERE id = $1 FOR UPDATE', [
    blockId,
  ]);
  return (rowCount ?? 0) > 0;
}

/**
 * Holds the rightsholders of these blocks of the organization (KEY SHARE) until the transaction
 * ends, so that deleting a rightsholder waits for the change; answers the blocks still there.
 */
export async function holdRightsholdersOfBlocks(
  db: Queryable,
  organizationId: string,
  blockIds: readonly string[],
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT b.id FROM catalog_blocks b JOIN rightsholders r ON r.id = b.rightsholder_id
     WHERE b.organization_id = $1 AND b.id = ANY ($2::uuid[]) ORDER BY r.id FOR KEY SHARE OF r`,
    [organizationId, blockIds],
  );
  return rows.map((r) => r.id);
}

/** The rightsholder of each of these blocks, by block id. */
export async function rightsholderIdsOfBlocks(
  db: Queryable,
  blockIds: readonly string[],
): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; rightsholder_id: string }>(
    'SELECT id, rightsholder_id FROM catalog_blocks WHERE id = ANY ($1::uuid[])',
    [blockIds],
  );
  return new Map(rows.map((b) => [b.id, b.rightsholder_id]));
}

/** These blocks of the organization with their rightsholders, by rightsholder name (ties by block id). */
export async function blocksWithRightsholders(
  db: Queryable,
  organizationId: string,
  blockIds: readonly string[],
): Promise<{ id: string; rightsholderId: string; rightsholderName: string }[]> {
  const { rows } = await db.query<{ id: string; rightsholderId: string; rightsholderName: string }>(
    `SELECT b.id, b.rightsholder_id AS "rightsholderId", r.name AS "rightsholderName" FROM catalog_blocks b JOIN rightsholders r ON r.id = b.rightsholder_id
     WHERE b.organization_id = $1 AND b.id = ANY ($2::uuid[]) ORDER BY r.name, b.id`,
    [organizationId, blockIds],
  );
  return rows;
}

/** The ids of the organization's blocks of one rightsholder. */
export async function blockIdsOfRightsholder(
  db: Queryable,
  organizationId: string,
  rightsholderId: string,
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM catalog_blocks WHERE organization_id = $1 AND rightsholder_id = $2',
    [organizationId, rightsholderId],
  );
  return rows.map((r) => r.id);
}
