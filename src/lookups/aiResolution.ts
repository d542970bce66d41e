// resolveWithAI and batchResolveWithAI for both kinds: gather what the resolver knows once per
// call, resolve the strings with the configured provider (at once, within the call's time
// budget), and save the proposals when asked.
// A saved proposal has status `ai_suggested` and never replaces a `verified` entry.
import { createEmbedder } from '../ai/embedding.ts';
import { createAiProvider } from '../ai/provider.ts';
import type { Config } from '../config.ts';
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import { salesTypeRules, sourceRules } from './fixtures.ts';
import { allGoldData } from './goldData.ts';
import { normalizeLookupKey } from './normalize.ts';
import {
  goldResolution,
  resolveSalesTypeOffline,
  resolveSourceOffline,
  sourceCandidates,
  type Resolution,
  type ResolutionMethod,
  type SalesTypeKnowledge,
  type SalesTypeProposal,
  type SourceKnowledge,
} from './offlineResolver.ts';
import {
  getSalesTypeLookup,
  listTaxonomy,
  upsertSalesTypeLookup,
  type SalesTypeLookup,
} from './salesTypes.ts';
import {
  getSourceLookup,
  upsertSourceLookup,
  type SourceLookup,
  type SourceResolution,
} from './sources.ts';
import { embeddedEntries } from './vectors.ts';
import { MAX_RESOLVE_BATCH } from './inputs.ts';

export { MAX_RESOLVE_BATCH };
export const AI_SUGGESTED = 'ai_suggested';

export interface ResolveResult<P, E> {
  original: string;
  normalized: string;
  provider: 'builtin' | 'openai';
  method: ResolutionMethod;
  confidence: number;
  reason: string;
  proposal: P | null;
  /** true when this call wrote the proposal as a lookup entry */
  saved: boolean;
  /** the lookup entry for the string after the call: the one that existed, or the one saved */
  entry: E | null;
}

export function assertBatchSize(values: readonly string[]): void {
  if (values.length > MAX_RESOLVE_BATCH) {
    throw new AppError(
      'RESOLVE_BATCH_TOO_LARGE',
      `At most ${MAX_RESOLVE_BATCH} strings per call; ${values.length} were given`,
    );
  }
}

function savedReason(provider: string, r: Resolution<unknown>) {
  return {
    resolvedBy: provider,
    method: r.method,
    confidence: r.confidence,
    explanation: r.reason,
  };
}

async function existingEntries<E extends { originalNormalized: string }>(
  db: Queryable,
  table: string,
  keys: string[],
  load: (db: Queryable, by: { original: string }) => Promise<E | null>,
) {
  const { rows } = await db.query<{ original: string; original_normalized: string }>(
    `SELECT original, original_normalized FROM ${table} WHERE original_normalized = ANY($1)`,
    [keys],
  );
  const found = new Map<string, E>();
  // loaded by the entry's own original, whose key is the stored one (a key normalized again can
  // differ: "the blorp radio", the key of "The The Blorp Radio", is itself keyed "blorp radio")
  for (const { original, original_normalized } of rows) {
    const entry = await load(db, { original });
    if (entry) found.set(original_normalized, entry);
  }
  return found;
}

/**
 * The time one resolution call may take, in AI_TIMEOUT_MS: each request to the provider has one
 * timeout, and a source string asks it twice (its embedding, then the model), so a batch resolved
 * one string after the other could take 10 × 2 timeouts.
 */
export const RESOLVE_BUDGET_TIMEOUTS = 2;

/**
 * `prepare` gathers what the call needs once and answers the function resolving one string; the
 * strings are then resolved at once (a batch is at most MAX_RESOLVE_BATCH, so at most that many
 * requests are in flight), those of one normalized form one after the other in input order, so a
 * later one finds the entry an earlier one saved. The whole call has RESOLVE_BUDGET_TIMEOUTS ×
 * AI_TIMEOUT_MS: when that runs out, the requests under way are aborted and the call is
 * AI_PROVIDER_FAILED with `details.results` (the strings resolved, in input order; `saved` ones
 * are saved) and `details.unresolved`. A failure of the provider stops the other strings and is
 * the call's answer.
 */
async function resolveWithinBudget<R>(
  config: Config,
  raws: string[],
  prepare: (signal: AbortSignal) => Promise<(raw: string) => Promise<R>>,
): Promise<R[]> {
  const budgetMs = config.ai.timeoutMs * RESOLVE_BUDGET_TIMEOUTS;
  const stop = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    stop.abort();
  }, budgetMs);
  const results: (R | undefined)[] = raws.map(() => undefined);
  let failure: { error: unknown } | undefined;
  try {
    const one = await prepare(stop.signal);
    const chains = new Map<string, Promise<void>>();
    await Promise.all(
      raws.map((raw, i) => {
        const key = normalizeLookupKey(raw);
        const chained = (chains.get(key) ?? Promise.resolve()).then(async () => {
          if (stop.signal.aborted) return;
          try {
            results[i] = await one(raw);
          } catch (error) {
            // what the expired budget aborted is unresolved, not a failure of the provider
            if (!expired) failure ??= { error };
            stop.abort();
          }
        });
        chains.set(key, chained);
        return chained;
      }),
    );
  } catch (error) {
    if (!expired) throw error;
  } finally {
    clearTimeout(timer);
  }
  if (failure) throw failure.error;
  const unresolved = raws.filter((_, i) => results[i] === undefined);
  if (unresolved.length === 0) return results as R[];
  const resolved = results.filter((r) => r !== undefined);
  throw new AppError(
    'AI_PROVIDER_FAILED',
    `The AI provider did not resolve ${unresolved.length} of ${raws.length} strings within the call's time budget (${budgetMs} ms: ${RESOLVE_BUDGET_TIMEOUTS} × AI_TIMEOUT_MS); details.results holds the ${resolved.length} resolved, details.unresolved the rest`,
    { details: { budgetMs, results: resolved, unresolved } },
  );
}

export async function resolveSources(
  db: Queryable,
  config: Config,
  raws: string[],
  saveToDb: boolean,
): Promise<ResolveResult<SourceResolution, SourceLookup>[]> {
  return resolveWithinBudget(config, raws, async (signal) => {
    const embedder = createEmbedder(config.ai, { signal });
    const provider = createAiProvider(config.ai, { signal });
    const knowledge: SourceKnowledge = {
      gold: await allGoldData(db),
      rules: sourceRules(),
      vectors: await embeddedEntries(db, embedder),
      embedder,
    };
    const existing = await existingEntries(
      db,
      'lookup_sources',
      raws.map(normalizeLookupKey),
      getSourceLookup,
    );
    return async (raw) => {
      const normalized = normalizeLookupKey(raw);
      const found = existing.get(normalized) ?? null;
      const offline = await resolveSourceOffline(raw, knowledge, found);
      const candidates = sourceCandidates(raw, knowledge).map((c) => ({
        label: c.row.rawValue,
        resolution: goldResolution(c.row),
      }));
      const answer = await provider.resolveSource({ raw, normalized, offline, candidates });
      let entry = found;
      let saved = false;
      if (saveToDb && answer.proposal && answer.method !== 'lookup') {
        const written = await upsertSourceLookup(
          db,
          raw,
          { ...answer.proposal, status: AI_SUGGESTED, reason: savedReason(provider.name, answer) },
          { keepVerified: true },
        );
        entry = written.entry;
        saved = written.entry.status === AI_SUGGESTED;
        existing.set(normalized, written.entry);
      }
      return { original: raw, normalized, provider: provider.name, ...answer, saved, entry };
    };
  });
}

export async function resolveSalesTypes(
  db: Queryable,
  config: Config,
  raws: string[],
  saveToDb: boolean,
): Promise<ResolveResult<SalesTypeProposal, SalesTypeLookup>[]> {
  return resolveWithinBudget(config, raws, async (signal) => {
    const provider = createAiProvider(config.ai, { signal });
    const { rows } = await db.query<{
      original: string;
      original_normalized: string;
      cleansed: string;
      primary_sales_type: string;
      secondary_sales_type: string | null;
    }>(
      `SELECT original, original_normalized, cleansed, primary_sales_type, secondary_sales_type FROM lookup_sales_types
       WHERE primary_sales_type IS NOT NULL ORDER BY (status = 'verified') DESC, updated_at DESC LIMIT 5000`,
    );
    const knowledge: SalesTypeKnowledge = {
      rules: salesTypeRules(),
      entries: rows.map((r) => ({
        original: r.original,
        originalNormalized: r.original_normalized,
        cleansed: r.cleansed,
        primarySalesType: r.primary_sales_type,
        secondarySalesType: r.secondary_sales_type,
      })),
    };
    const taxonomy = await listTaxonomy(db);
    const existing = await existingEntries(
      db,
      'lookup_sales_types',
      raws.map(normalizeLookupKey),
      getSalesTypeLookup,
    );
    return async (raw) => {
      const normalized = normalizeLookupKey(raw);
      const found = existing.get(normalized) ?? null;
      const offline = resolveSalesTypeOffline(raw, knowledge, found);
      const answer = await provider.resolveSalesType({ raw, normalized, offline, taxonomy });
      let entry = found;
      let saved = false;
      if (saveToDb && answer.proposal && answer.method !== 'lookup') {
        const written = await upsertSalesTypeLookup(
          db,
          raw,
          { ...answer.proposal, status: AI_SUGGESTED, reason: savedReason(provider.name, answer) },
          { keepVerified: true },
        );
        entry = written.entry;
        saved = written.entry.status === AI_SUGGESTED;
        existing.set(normalized, written.entry);
      }
      return { original: raw, normalized, provider: provider.name, ...answer, saved, entry };
    };
  });
}
