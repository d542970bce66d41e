// The block actions of fetching.*: the block must be visible to the caller; the change and its
// activity entry are one transaction, and the enrichment queue is woken when work was added.
import { recordActivity } from '../../activity/record.ts';
import type { Principal } from '../../auth/principal.ts';
import { lockBlock, visibleBlock } from '../../catalog/blockStore.ts';
import { enqueueEnrichment } from '../../catalog/enrichQueue.ts';
import type { Caller } from '../../catalog/musicalDetails.ts';
import { withTransaction, type Queryable } from '../../db/pool.ts';
import type { Deps } from '../../deps.ts';

export async function blockAction(
  deps: Deps,
  principal: Principal,
  caller: Caller,
  blockId: string,
  action: string,
  change: (db: Queryable, blockId: string) => Promise<number>,
  wakeQueue: boolean,
): Promise<{ blockId: string; musicalDetails: number }> {
  return withTransaction(deps.pool, async (db) => {
    const block = await visibleBlock(db, caller, blockId);
    await lockBlock(db, block.id);
    const n = await change(db, block.id);
    if (wakeQueue && n > 0) await enqueueEnrichment(db);
    await recordActivity(db, principal, {
      organizationId: caller.organizationId,
      action,
      subjectType: 'rightsholder',
      subjectId: block.rightsholderId,
      subjectLabel: block.rightsholderName,
      changes: { musicalDetails: { before: null, after: n } },
    });
    return { blockId: block.id, musicalDetails: n };
  });
}
