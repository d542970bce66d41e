// catalog_enrich_tick (every minute): reclaims stale enrichment claims and queues a drain when
// work is due, so the queue moves even when nothing new arrives (a worker died, a backoff ran out).
import {
  defaultEnrichSettings,
  enrichmentDue,
  enqueueEnrichment,
  reclaimStale,
} from '../../catalog/enrichQueue.ts';
import { defineTask } from '../defineTask.ts';
import { TASK } from '../payloads.ts';

export const catalogEnrichTickTask = defineTask(
  TASK.catalog_enrich_tick,
  async (_payload, { deps }) => {
    await reclaimStale(deps.pool, defaultEnrichSettings.lockTimeoutMs);
    // a deleted organization's details are never claimed: they call for no drain
    if (await enrichmentDue(deps.pool)) await enqueueEnrichment(deps.pool);
  },
);
