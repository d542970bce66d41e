// The catalog's graphile-worker tasks:
// - catalog_block_refresh { organizationId, rightsholderId, reason }: rebuilds a block's musical
//   details (job key and queue per rightsholder), then queues enrichment of what is pending.
// - catalog_enrich {}: drains the enrichment queue for up to ENRICH_BUDGET_MS, then queues itself
//   again for what remains (now, or when the next retry is due).
// - catalog_enrich_tick (every minute): reclaims stale claims and queues a drain when work is due,
//   so the queue moves even when nothing new arrives (a worker died, a backoff ran out).
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { Deps } from '../deps.ts';
import { refreshBlock } from './blocks.ts';
import { createProvider } from './enrich/index.ts';
import type { EnrichmentProvider } from './enrich/provider.ts';
import { defaultEnrichSettings, drainQueue, enqueueEnrichment, reclaimStale } from './enrichQueue.ts';
import { afterEnrichment } from './followUps.ts';

export const ENRICH_TICK_TASK = 'catalog_enrich_tick';
const ENRICH_BUDGET_MS = 20_000;

const refreshPayload = z.object({ organizationId: z.uuid(), rightsholderId: z.uuid(), reason: z.string().max(100).optional() });

export function catalogBlockRefreshTask(deps: Deps): Task {
  return async (payload, helpers) => {
    const parsed = refreshPayload.safeParse(payload);
    if (!parsed.success) {
      helpers.logger.error(`catalog_block_refresh: invalid payload, dropped: ${parsed.error.message}`);
      return;
    }
    const { organizationId, rightsholderId, reason } = parsed.data;
    // nothing is rebuilt for a deleted organization
    const live = await deps.pool.query('SELECT 1 FROM organizations WHERE id = $1 AND deleted_at IS NULL', [organizationId]);
    if (!live.rowCount) return;
    const result = await refreshBlock(deps, organizationId, rightsholderId);
    if (!result) return; // the rightsholder is gone, and its block with it
    helpers.logger.info(
      `block ${result.blockId} (${reason ?? 'refresh'}): ${result.musicalDetails} musical details from ${result.statements} statements, +${result.added} -${result.removed}`,
    );
    await enqueueEnrichment(deps.pool);
  };
}

let cachedProvider: { config: Deps['config']; provider: EnrichmentProvider } | undefined;
function providerFor(deps: Deps): EnrichmentProvider {
  if (cachedProvider?.config !== deps.config) cachedProvider = { config: deps.config, provider: createProvider(deps.config) };
  return cachedProvider.provider;
}

export function catalogEnrichTask(deps: Deps, provider?: EnrichmentProvider): Task {
  return async (_payload, helpers) => {
    const result = await drainQueue(deps, provider ?? providerFor(deps), {
      budgetMs: ENRICH_BUDGET_MS,
      onBlocksAdvanced: (blockIds) => afterEnrichment(deps, blockIds),
    });
    const s = result.settled;
    if (result.rounds > 0) {
      helpers.logger.info(`enrichment: ${s.found} found, ${s.not_found} not found, ${s.retry} to retry, ${s.failed} failed in ${result.rounds} rounds`);
    }
    if (result.nextDueAt) await enqueueEnrichment(deps.pool, result.nextDueAt > new Date() ? result.nextDueAt : undefined);
  };
}

export function catalogEnrichTickTask(deps: Deps): Task {
  return async () => {
    await reclaimStale(deps.pool, defaultEnrichSettings.lockTimeoutMs);
    // a deleted organization's details are never claimed: they call for no drain
    const due = await deps.pool.query(
      `SELECT 1 FROM musical_details md JOIN organizations o ON o.id = md.organization_id AND o.deleted_at IS NULL
       WHERE md.state = 'pending' AND md.next_attempt_at <= clock_timestamp() LIMIT 1`,
    );
    if (due.rowCount) await enqueueEnrichment(deps.pool);
  };
}
