// Input fields shared by the sales-type and source lookup procedures.
import { z } from 'zod';
import { normalizeLookupKey } from './normalize.ts';
import { list } from '../schemas.ts';

/** Text matched by its normalized key: it must keep a letter or digit after normalization, or nothing could match it. */
const matchable = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .refine((s) => normalizeLookupKey(s) !== '', 'must contain a letter or a digit');

/** A raw statement string. */
export const rawString = matchable(500);

/** A source name of the vector index. */
export const vectorName = matchable(200);

export const status = z.string().trim().min(1).max(50);
export const label = z.string().trim().min(1).max(200);
export const nullableLabel = label.nullable().optional();

/** One status or several (the specification leaves the type open). */
export const statusFilter = z.union([status, list(status, 20)]).optional();

export function statuses(filter: string | string[] | undefined): string[] | undefined {
  if (filter === undefined) return undefined;
  return Array.isArray(filter) ? filter : [filter];
}

/** The specification's limit on one batch resolution. */
export const MAX_RESOLVE_BATCH = 10;

/**
 * Resolution input: up to 100 strings are accepted as input, more than MAX_RESOLVE_BATCH are
 * refused by the handler with its own code (assertBatchSize); the schema states that limit.
 */
export const rawBatch = list(rawString, 100)
  .min(1)
  .meta({
    maxItems: MAX_RESOLVE_BATCH,
    description: `1 to ${MAX_RESOLVE_BATCH} strings; more is RESOLVE_BATCH_TOO_LARGE`,
  });
