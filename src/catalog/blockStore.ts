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
export async function visibleBlock(db: Queryable, caller: Caller, blockId: string): Promise<VisibleBlock> {
  const { rows } = await db.query<VisibleBlock>(
    `SELECT b.id, b.rightsholder_id AS "rightsholderId", r.name AS "rightsholderName"
     FROM catalog_blocks b JOIN rightsholders r ON r.id = b.rightsholder_id
     WHERE b.id = $1 AND b.organization_id = $2 AND ${inRightsholderScope('b.rightsholder_id', '$3')}`,
    [blockId, caller.organizationId, caller.rightsholderScope],
  );
  if (!rows[0]) throw new AppError('BLOCK_NOT_FOUND');
  return rows[0];
}

/** Locks the block's row until the transaction ends: one change of its clusters, products or queue at a time. */
export async function lockBlock(db: Queryable, blockId: string): Promise<void> {
  await db.query('SELECT 1 FROM catalog_blocks WHERE id = $1 FOR UPDATE', [blockId]);
}
