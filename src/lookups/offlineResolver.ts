// The built-in resolver: proposes a lookup entry for a raw string with no network. In order:
// an existing lookup entry (exact after normalization), the gold data (exact, then spelled
// together), the rules and the gold-data phrases contained in the string, and similarity over
// the vector entries (sources) or the existing entries (sales types). Every answer says how it
// was found and how sure it is.
import { cosine, hashedNgramEmbedding, type Embedder } from '../ai/embedding.ts';
import { canonicalSourceName, type SalesTypeRule, type SourceRule } from './fixtures.ts';
import type { GoldDataRow } from './goldData.ts';
import { baseTokens, normalizeLookupKey, tidyLabel } from './normalize.ts';
import type { SalesTypeLookup } from './salesTypes.ts';
import type { SourceLookup, SourceResolution } from './sources.ts';
import type { EmbeddedEntry } from './vectors.ts';

export type ResolutionMethod =
  'lookup' | 'gold' | 'rule' | 'phrase' | 'vector' | 'similar' | 'model' | 'none';

export interface Resolution<P> {
  proposal: P | null;
  /** 0 … 1 */
  confidence: number;
  method: ResolutionMethod;
  reason: string;
}

export interface SalesTypeProposal {
  cleansed: string;
  primarySalesType: string | null;
  secondarySalesType: string | null;
}

/** Similarity below this is no match: unrelated names score well under it. */
export const VECTOR_THRESHOLD = 0.55;
const SIMILAR_SALES_TYPE_THRESHOLD = 0.6;

const round = (x: number) => Math.round(x * 100) / 100;

export interface SourceKnowledge {
  gold: GoldDataRow[];
  rules: SourceRule[];
  vectors: EmbeddedEntry[];
  embedder: Embedder;
}

export function goldResolution(
  row: Pick<
    GoldDataRow,
    'collectionSource' | 'earningsSource' | 'earningsCategory' | 'parentCompany' | 'publisherSource'
  >,
): SourceResolution {
  return {
    collectionSource: row.collectionSource,
    earningsSource: row.earningsSource,
    earningsCategory: row.earningsCategory,
    earningsParentCompany: row.parentCompany,
    publisherSource: row.publisherSource,
  };
}

export function lookupResolution(entry: SourceLookup): SourceResolution {
  return {
    collectionSource: entry.collectionSource,
    earningsSource: entry.earningsSource,
    earningsCategory: entry.earningsCategory,
    earningsParentCompany: entry.earningsParentCompany,
    publisherSource: entry.publisherSource,
  };
}

function tokenMatches(ruleToken: string, token: string): boolean {
  return ruleToken.endsWith('*') ? token.startsWith(ruleToken.slice(0, -1)) : token === ruleToken;
}

function ruleMatches(ruleTokens: readonly string[], tokens: readonly string[]): boolean {
  return ruleTokens.every((r) => tokens.some((t) => tokenMatches(r, t)));
}

/** Does `phrase` occur in `tokens` as consecutive tokens, or spelled together across up to three? */
function containsPhrase(tokens: readonly string[], phrase: readonly string[]): boolean {
  outer: for (let i = 0; i + phrase.length <= tokens.length; i++) {
    for (let j = 0; j < phrase.length; j++) if (tokens[i + j] !== phrase[j]) continue outer;
    return true;
  }
  const compact = phrase.join('');
  for (let i = 0; i < tokens.length; i++) {
    let joined = tokens[i]!;
    for (let n = 2; n <= 3 && i + n <= tokens.length; n++) {
      joined += tokens[i + n - 1]!;
      if (joined === compact) return true;
    }
  }
  return false;
}

/** Best source candidates by phrase and rule, most specific first (for the model's prompt too). */
export function sourceCandidates(
  raw: string,
  k: SourceKnowledge,
): { row: GoldDataRow; score: number; via: string }[] {
  const tokens = baseTokens(raw);
  const byRaw = new Map(k.gold.map((g) => [g.rawValueNormalized, g]));
  const found: { row: GoldDataRow; score: number; via: string }[] = [];
  for (const row of k.gold) {
    const phrase = row.rawValueNormalized.split(' ');
    const score = phrase.join('').length;
    if (score >= 3 && containsPhrase(tokens, phrase))
      found.push({ row, score, via: `contains the gold-data phrase "${row.rawValue}"` });
  }
  for (const rule of k.rules) {
    const target = byRaw.get(normalizeLookupKey(rule.goldRawValue));
    if (target && ruleMatches(rule.tokens, tokens)) {
      found.push({
        row: target,
        score: rule.tokens.join('').length,
        via: `matches the rule "${rule.tokens.join(' ')}" → ${rule.goldRawValue}`,
      });
    }
  }
  return found.sort((a, b) => b.score - a.score);
}

/** The gold data's answer: the same name, the same name spelled together, else a phrase or rule it contains. */
function goldDataMatch(raw: string, k: SourceKnowledge): Resolution<SourceResolution> | null {
  const key = normalizeLookupKey(raw);
  const exact = k.gold.find((g) => g.rawValueNormalized === key);
  if (exact) {
    return {
      proposal: goldResolution(exact),
      confidence: 0.97,
      method: 'gold',
      reason: `Gold data "${exact.rawValue}" has the same normalized form "${key}"`,
    };
  }
  const compact = key.replace(/ /g, '');
  const together =
    compact.length >= 3
      ? k.gold.find((g) => g.rawValueNormalized.replace(/ /g, '') === compact)
      : undefined;
  if (together) {
    return {
      proposal: goldResolution(together),
      confidence: 0.95,
      method: 'gold',
      reason: `Gold data "${together.rawValue}" is the same name spelled together`,
    };
  }
  const [best] = sourceCandidates(raw, k);
  if (!best) return null;
  const coverage = Math.min(1, best.score / Math.max(1, compact.length));
  return {
    proposal: goldResolution(best.row),
    confidence: round(0.7 + 0.25 * coverage),
    method: best.via.startsWith('matches the rule') ? 'rule' : 'phrase',
    reason: `"${raw}" ${best.via}`,
  };
}

/** The most similar vector entry, when similar enough; its gold row's answer, else its name as the earnings source. */
async function vectorMatch(
  raw: string,
  k: SourceKnowledge,
): Promise<Resolution<SourceResolution> | null> {
  const [query] = k.vectors.length > 0 ? await k.embedder.embed([raw]) : [[]];
  let top: { entry: EmbeddedEntry; similarity: number } | undefined;
  for (const entry of k.vectors) {
    const similarity = cosine(query!, entry.embedding);
    if (!top || similarity > top.similarity) top = { entry, similarity };
  }
  if (!top || top.similarity < VECTOR_THRESHOLD) return null;
  const name = top.entry.name;
  const nameKey = normalizeLookupKey(name);
  // an entry named like a gold row takes that row; otherwise any row of that canonical name
  const row =
    k.gold.find((g) => g.rawValueNormalized === nameKey) ??
    k.gold.find((g) => canonicalSourceName(g) === name);
  const proposal: SourceResolution = row
    ? goldResolution(row)
    : {
        collectionSource: null,
        earningsSource: name,
        earningsCategory: top.entry.category,
        earningsParentCompany: null,
        publisherSource: null,
      };
  return {
    proposal,
    confidence: round(top.similarity * 0.9),
    method: 'vector',
    reason: `Similar (cosine ${top.similarity.toFixed(2)}) to the vector entry "${name}" (${top.entry.category})`,
  };
}

export async function resolveSourceOffline(
  raw: string,
  k: SourceKnowledge,
  existing: SourceLookup | null,
): Promise<Resolution<SourceResolution>> {
  if (existing) {
    return {
      proposal: lookupResolution(existing),
      confidence: 1,
      method: 'lookup',
      reason: `The lookup entry "${existing.original}" has the same normalized form "${normalizeLookupKey(raw)}"`,
    };
  }
  const found = goldDataMatch(raw, k) ?? (await vectorMatch(raw, k));
  if (found) return found;
  return {
    proposal: null,
    confidence: 0,
    method: 'none',
    reason: 'No lookup entry, gold data, rule or similar vector entry matches',
  };
}

export interface SalesTypeKnowledge {
  rules: SalesTypeRule[];
  /** existing entries with a sales type, for similarity */
  entries: Pick<
    SalesTypeLookup,
    'original' | 'originalNormalized' | 'cleansed' | 'primarySalesType' | 'secondarySalesType'
  >[];
}

export function salesTypeRuleMatches(
  raw: string,
  rules: readonly SalesTypeRule[],
): SalesTypeRule[] {
  const tokens = baseTokens(raw);
  return rules
    .filter((r) => ruleMatches(r.tokens, tokens))
    .sort(
      (a, b) =>
        b.priority - a.priority ||
        b.tokens.length - a.tokens.length ||
        b.tokens.join('').length - a.tokens.join('').length,
    );
}

export function resolveSalesTypeOffline(
  raw: string,
  k: SalesTypeKnowledge,
  existing: SalesTypeLookup | null,
): Resolution<SalesTypeProposal> {
  const key = normalizeLookupKey(raw);
  if (existing) {
    return {
      proposal: {
        cleansed: existing.cleansed,
        primarySalesType: existing.primarySalesType,
        secondarySalesType: existing.secondarySalesType,
      },
      confidence: 1,
      method: 'lookup',
      reason: `The lookup entry "${existing.original}" has the same normalized form "${key}"`,
    };
  }
  const cleansed = tidyLabel(raw);
  const matches = salesTypeRuleMatches(raw, k.rules);
  const best = matches[0];
  if (best) {
    const agree = matches.every((m) => m.primarySalesType === best.primarySalesType);
    return {
      proposal: {
        cleansed,
        primarySalesType: best.primarySalesType,
        secondarySalesType: best.secondarySalesType,
      },
      confidence: agree ? 0.9 : 0.75,
      method: 'rule',
      reason:
        `The rule "${best.tokens.join(' ')}" (priority ${best.priority}) gives ${best.primarySalesType} / ${best.secondarySalesType}` +
        (agree
          ? ''
          : `; other rules also matched: ${matches
              .slice(1)
              .map((m) => `"${m.tokens.join(' ')}"`)
              .join(', ')}`),
    };
  }
  const query = hashedNgramEmbedding(raw);
  let top: { entry: SalesTypeKnowledge['entries'][number]; similarity: number } | undefined;
  for (const entry of k.entries) {
    if (!entry.primarySalesType) continue;
    const similarity = cosine(query, hashedNgramEmbedding(entry.original));
    if (!top || similarity > top.similarity) top = { entry, similarity };
  }
  if (top && top.similarity >= SIMILAR_SALES_TYPE_THRESHOLD) {
    return {
      proposal: {
        cleansed,
        primarySalesType: top.entry.primarySalesType,
        secondarySalesType: top.entry.secondarySalesType,
      },
      confidence: round(top.similarity * 0.85),
      method: 'similar',
      reason: `Similar (cosine ${top.similarity.toFixed(2)}) to the lookup entry "${top.entry.original}"`,
    };
  }
  return {
    proposal: null,
    confidence: 0,
    method: 'none',
    reason: 'No lookup entry, rule or similar entry matches',
  };
}
