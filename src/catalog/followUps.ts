// What follows a change of a block's musical details: its title clusters and its products are
// derived from them (src/catalog/clusters.ts, src/catalog/products.ts).
import type { Deps } from '../deps.ts';
import { refreshClusters } from './clusters.ts';
import { refreshProducts } from './products.ts';

/** After a refresh rebuilt the block's musical details (a failure fails the refresh job, which retries). */
export async function afterBlockRefresh(deps: Deps, blockId: string): Promise<void> {
  await refreshClusters(deps, blockId);
  await refreshProducts(deps, blockId);
}

/**
 * After enrichment settled musical details of these blocks: fetched titles can move details
 * between clusters, so both are derived again. The enrichment itself is committed; a failure here
 * is logged and the next round, refresh or correction derives them again.
 */
export function afterEnrichment(deps: Deps, blockIds: readonly string[]): Promise<void> {
  return rederive(deps, blockIds, 'after enrichment');
}

/** After a user corrected musical details of these blocks: the correction shows in the next read. */
export function afterCorrection(deps: Deps, blockIds: readonly string[]): Promise<void> {
  return rederive(deps, blockIds, 'after a correction');
}

async function rederive(deps: Deps, blockIds: readonly string[], when: string): Promise<void> {
  for (const blockId of blockIds) {
    try {
      await refreshClusters(deps, blockId);
      await refreshProducts(deps, blockId);
    } catch (error) {
      deps.log.warn(
        { err: error, blockId },
        `clusters and products of a block could not be refreshed ${when}`,
      );
    }
  }
}
