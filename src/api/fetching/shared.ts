// The block actions of fetching.*: the block must be visible to the caller; the change and its
// activity entry are one transaction, and the enrichment queue is woken when work was added.
import { recordActivity } from '../../activity/record.ts';
import type { Principal } from '../../auth/principal.ts';
import { withTransaction } from '../../db/pool.ts';
import { enqueueEnrichment } from '../../catalog/enrichQueue.ts';
import { visibleBlock } from '../../catalog/musicalDetails.ts';
import type { Queryable } from '../../db/pool.ts';
import type { Deps } from '../../deps.ts';

export async function blockAction(
  deps: Deps,
  principal: Principal,
  organizationId: string,
  blockId: string,
  action: string,
  change: (db: Queryable, blockId: string) => Promise<number>,
  wakeQueue: boolean,
): Promise<{ blockId: string; musicalDetails: number }> {
  return withTransaction(deps.pool, async (db) => {
    const block = await visibleBlock(db, { organizationId, userId: principal.userId }, blockId);
    await db.query('SELECT 1 FROM catalog_blocks WHERE id = $1 FOR UPDATE', [block.id]);
    const n = await change(db, block.id);
    if (wakeQueue && n > 0) await enqueueEnrichment(db);
    await recordActivity(db, principal, {
      organizationId,
      action,
      subjectType: 'rightsholder',
      subjectId: block.rightsholderId,
      subjectLabel: block.rightsholderName,
      changes: { musicalDetails: { before: null, after: n } },
    });
    return { blockId: block.id, musicalDetails: n };
  });
}
