// catalog_enrich {}: drains the enrichment queue (src/catalog/enrichQueue.ts) for up to
// ENRICH_BUDGET_MS with the configured provider, then queues itself again for what remains (now,
// or when the next retry is due).
import { createProvider } from '../../catalog/enrich/index.ts';
import type { EnrichmentProvider } from '../../catalog/enrich/provider.ts';
import { drainQueue, enqueueEnrichment } from '../../catalog/enrichQueue.ts';
import { afterEnrichment } from '../../catalog/followUps.ts';
import type { Deps } from '../../deps.ts';
import { defineTask } from '../defineTask.ts';
import { TASK } from '../payloads.ts';

const ENRICH_BUDGET_MS = 20_000;

let cachedProvider: { config: Deps['config']; provider: EnrichmentProvider } | undefined;
function providerFor(deps: Deps): EnrichmentProvider {
  if (cachedProvider?.config !== deps.config)
    cachedProvider = { config: deps.config, provider: createProvider(deps.config) };
  return cachedProvider.provider;
}

export const catalogEnrichTask = defineTask(
  TASK.catalog_enrich,
  async (_payload, { deps, helpers }) => {
    const result = await drainQueue(deps, providerFor(deps), {
      budgetMs: ENRICH_BUDGET_MS,
      onBlocksAdvanced: (blockIds) => afterEnrichment(deps, blockIds),
    });
    const s = result.settled;
    if (result.rounds > 0) {
      helpers.logger.info(
        `enrichment: ${s.found} found, ${s.not_found} not found, ${s.retry} to retry, ${s.failed} failed in ${result.rounds} rounds`,
      );
    }
    if (result.nextDueAt)
      await enqueueEnrichment(
        deps.pool,
        result.nextDueAt > new Date() ? result.nextDueAt : undefined,
      );
  },
);
