// resolveWithAI and batchResolveWithAI for both kinds: gather what the resolver knows once per
// call, resolve each string with the configured provider, and save the proposals when asked.
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
} from './resolver.ts';
import { getSalesTypeLookup, listTaxonomy, upsertSalesTypeLookup, type SalesTypeLookup } from './salesTypes.ts';
import { getSourceLookup, upsertSourceLookup, type SourceLookup, type SourceResolution } from './sources.ts';
import { embeddedEntries } from './vectors.ts';

/** The specification's limit on one batch resolution. */
export const MAX_RESOLVE_BATCH = 10;
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
    throw new AppError('RESOLVE_BATCH_TOO_LARGE', `At most ${MAX_RESOLVE_BATCH} strings per call; ${values.length} were given`);
  }
}

function savedReason(provider: string, r: Resolution<unknown>) {
  return { resolvedBy: provider, method: r.method, confidence: r.confidence, explanation: r.reason };
}

async function existingEntries<E extends { originalNormalized: string }>(db: Queryable, table: string, keys: string[], load: (db: Queryable, by: { original: string }) => Promise<E | null>) {
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

export async function resolveSources(db: Queryable, config: Config, raws: string[], saveToDb: boolean): Promise<ResolveResult<SourceResolution, SourceLookup>[]> {
  const embedder = createEmbedder(config.ai);
  const provider = createAiProvider(config.ai);
  const knowledge: SourceKnowledge = { gold: await allGoldData(db), rules: sourceRules(), vectors: await embeddedEntries(db, embedder), embedder };
  const existing = await existingEntries(db, 'lookup_sources', raws.map(normalizeLookupKey), getSourceLookup);
  const results: ResolveResult<SourceResolution, SourceLookup>[] = [];
  for (const raw of raws) {
    const normalized = normalizeLookupKey(raw);
    const found = existing.get(normalized) ?? null;
    const offline = await resolveSourceOffline(raw, knowledge, found);
    const candidates = sourceCandidates(raw, knowledge).map((c) => ({ label: c.row.rawValue, resolution: goldResolution(c.row) }));
    const answer = await provider.resolveSource({ raw, normalized, offline, candidates });
    let entry = found;
    let saved = false;
    if (saveToDb && answer.proposal && answer.method !== 'lookup') {
      const written = await upsertSourceLookup(db, raw, { ...answer.proposal, status: AI_SUGGESTED, reason: savedReason(provider.name, answer) }, { keepVerified: true });
      entry = written.entry;
      saved = written.entry.status === AI_SUGGESTED;
      existing.set(normalized, written.entry);
    }
    results.push({ original: raw, normalized, provider: provider.name, ...answer, saved, entry });
  }
  return results;
}

export async function resolveSalesTypes(db: Queryable, config: Config, raws: string[], saveToDb: boolean): Promise<ResolveResult<SalesTypeProposal, SalesTypeLookup>[]> {
  const provider = createAiProvider(config.ai);
  const { rows } = await db.query<{ original: string; original_normalized: string; cleansed: string; primary_sales_type: string; secondary_sales_type: string | null }>(
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
  const existing = await existingEntries(db, 'lookup_sales_types', raws.map(normalizeLookupKey), getSalesTypeLookup);
  const results: ResolveResult<SalesTypeProposal, SalesTypeLookup>[] = [];
  for (const raw of raws) {
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
    results.push({ original: raw, normalized, provider: provider.name, ...answer, saved, entry });
  }
  return results;
}
