// Musical details and their effective values: the fetched result with, field by field, the latest
// override that names the field laid over it. Their SQL is in musicalDetailStore.ts.
import type { RightsholderScope } from '../access/dataAccess.ts';

/**
 * Whose reach a read is limited to: the organization and the rightsholders the caller may see
 * (`ctx.org.rightsholderScope`, loaded once by the procedure middleware).
 */
export interface Caller {
  organizationId: string;
  rightsholderScope: RightsholderScope;
}

/** The Caller of a procedure, from its `ctx.org`. */
export function callerOf(org: { id: string; rightsholderScope: RightsholderScope }): Caller {
  return { organizationId: org.id, rightsholderScope: org.rightsholderScope };
}

export const overrideFields = [
  'title',
  'artist',
  'releaseDate',
  'imageUrl',
  'genres',
  'albums',
  'songWriters',
  'fetchedComposers',
] as const;
export type OverrideField = (typeof overrideFields)[number];
export type OverrideValues = Partial<Record<OverrideField, unknown>>;

export interface FetchedResult {
  title?: string;
  artist?: string;
  isrc?: string | null;
  releaseTitle?: string | null;
  releaseArtist?: string | null;
  releaseDate?: string | null;
  genres?: string[];
  songWriters?: string[];
  composers?: string[];
  imageUrl?: string | null;
  confidence?: number;
}

export interface EffectiveValues {
  title: string;
  artist: string | null;
  releaseDate: string | null;
  imageUrl: string | null;
  genres: string[];
  albums: string[];
  songWriters: string[];
  fetchedComposers: unknown[];
}

export interface OverrideRow {
  id: string;
  kind: string;
  ruleId: string | null;
  values: OverrideValues;
  createdBy: string | null;
  createdAt: string;
}

/**
 * The values a musical detail stands for: its raw title and artist, else the fetched result, with
 * each field of the latest override naming it on top (overrides in creation order).
 */
export function effectiveValues(
  md: { title: string; artist: string | null; result: FetchedResult | null },
  overrides: readonly OverrideRow[],
): EffectiveValues {
  const r = md.result;
  const base: EffectiveValues = {
    title: r?.title ?? md.title,
    artist: r?.artist ?? md.artist,
    releaseDate: r?.releaseDate ?? null,
    imageUrl: r?.imageUrl ?? null,
    genres: r?.genres ?? [],
    albums: r?.releaseTitle ? [r.releaseTitle] : [],
    songWriters: r?.songWriters ?? [],
    fetchedComposers: (r?.composers ?? []).map((name) => ({ name })),
  };
  const sorted = [...overrides].sort((a, b) =>
    a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1,
  );
  const out = base as unknown as Record<string, unknown>;
  const title = base.title;
  for (const o of sorted) {
    for (const field of overrideFields) {
      const value = o.values[field];
      if (value === undefined) continue;
      // a track always has a title: an empty one clears the correction, back to the fetched or raw title
      out[field] = field === 'title' && value === '' ? title : value;
    }
  }
  return base;
}

export interface MusicalDetailRecord {
  id: string;
  blockId: string;
  rightsholderId: string;
  identityKey: string;
  isrc: string | null;
  title: string;
  artist: string | null;
  releaseTitle: string | null;
  releaseArtist: string | null;
  variants: unknown[];
  rowCount: number;
  earningsUsd: string;
  rowsWithoutRate: number;
  state: string;
  attempts: number;
  nextAttemptAt: string | null;
  lastError: string | null;
  provider: string | null;
  providerId: string | null;
  result: FetchedResult | null;
  fetchedAt: string | null;
  /** the result shown is from an earlier fetch: a re-fetch is queued, running, failed or was stopped */
  stale: boolean;
  ignored: boolean;
  clusterId: string | null;
  effective: EffectiveValues;
  overriddenFields: OverrideField[];
  trail?: OverrideRow[];
  createdAt: string;
  updatedAt: string;
}
