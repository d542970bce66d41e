// catalog_block_refresh { organizationId, rightsholderId, reason, waitingSince }: rebuilds a
// block's musical details (job key and queue per rightsholder: src/catalog/blocks.ts), then queues
// enrichment of what is pending. Nothing is rebuilt for a deleted organization.
// While statements of the rightsholder have their ingestion job waiting or running, the refresh waits for them
// (queued again, DEFER_SECONDS later): each of them queues the refresh again as it is processed, so
// a burst of statements makes one refresh, after its last, and the refresh takes no time from
// them. One whose statements stay in flight (stuck, or an endless stream) runs after MAX_WAIT_MS.
import { enqueueBlockRefresh, refreshBlock } from '../../catalog/blocks.ts';
import { enqueueEnrichment } from '../../catalog/enrichQueue.ts';
import { ingestionsInFlight } from '../../ingest/queue.ts';
import { organizationIsLive } from '../../organizations/organizations.ts';
import { defineTask } from '../defineTask.ts';
import { TASK } from '../payloads.ts';

/** how long a refresh waits before looking again at the rightsholder's statements in flight */
export const refreshWaitSettings = { deferSeconds: 2, maxWaitMs: 5 * 60_000 };

export const catalogBlockRefreshTask = defineTask(
  TASK.catalog_block_refresh,
  async ({ organizationId, rightsholderId, reason, waitingSince }, { deps, helpers }) => {
    if (!(await organizationIsLive(deps.pool, organizationId))) return;
    const since = waitingSince ?? Date.now();
    if (
      Date.now() - since < refreshWaitSettings.maxWaitMs &&
      (await ingestionsInFlight(deps.pool, organizationId, rightsholderId))
    ) {
      await enqueueBlockRefresh(deps.pool, organizationId, [rightsholderId], reason ?? 'refresh', {
        inSeconds: refreshWaitSettings.deferSeconds,
        waitingSince: since,
      });
      return;
    }
    const result = await refreshBlock(deps, organizationId, rightsholderId);
    if (!result) return; // the rightsholder is gone, and its block with it
    helpers.logger.info(
      `block ${result.blockId} (${reason ?? 'refresh'}): ${result.musicalDetails} musical details from ${result.statements} statements, +${result.added} -${result.removed}`,
    );
    await enqueueEnrichment(deps.pool);
  },
);
