// catalog_block_refresh { organizationId, rightsholderId, reason }: rebuilds a block's musical
// details (job key and queue per rightsholder: src/catalog/blocks.ts), then queues enrichment of
// what is pending. Nothing is rebuilt for a deleted organization.
import { refreshBlock } from '../../catalog/blocks.ts';
import { enqueueEnrichment } from '../../catalog/enrichQueue.ts';
import { defineTask } from '../defineTask.ts';
import { TASK } from '../payloads.ts';

export const catalogBlockRefreshTask = defineTask(TASK.catalog_block_refresh, async ({ organizationId, rightsholderId, reason }, { deps, helpers }) => {
  const live = await deps.pool.query('SELECT 1 FROM organizations WHERE id = $1 AND deleted_at IS NULL', [organizationId]);
  if (!live.rowCount) return;
  const result = await refreshBlock(deps, organizationId, rightsholderId);
  if (!result) return; // the rightsholder is gone, and its block with it
  helpers.logger.info(
    `block ${result.blockId} (${reason ?? 'refresh'}): ${result.musicalDetails} musical details from ${result.statements} statements, +${result.added} -${result.removed}`,
  );
  await enqueueEnrichment(deps.pool);
});
