// Bounded building blocks for input schemas: every string, array and free-form JSON value has a
// size limit, so hostile input is BAD_REQUEST, never a crash.
import { z } from 'zod';

export const text = (max = 1_000) => z.string().max(max);
export const name = (max = 200) => z.string().trim().min(1).max(max);
export const list = <T extends z.ZodType>(item: T, max = 1_000) => z.array(item).max(max);

export const organizationId = z.uuid().describe('organization (tenant) id');

/** A date filter: a real calendar date (2024-02-30 is refused) or an ISO date-time, with or without an offset. */
export const dateFilter = () =>
  z.union([z.iso.date(), z.iso.datetime({ offset: true, local: true })], {
    error: 'must be an ISO date (YYYY-MM-DD) or date-time',
  });

/** The input of a procedure that takes none: nothing, null or an empty object. */
export const noInput = z.object({}).nullish();

/** Any JSON value, at most `maxBytes` when serialized and `maxDepth` levels deep. */
export function jsonValue(maxBytes = 100_000, maxDepth = 20) {
  return z.unknown().superRefine((value, ctx) => {
    if (value === undefined) return;
    let serialized: string;
    try {
      serialized = JSON.stringify(value) ?? '';
    } catch {
      ctx.addIssue({
        code: 'custom',
        message: `must be a JSON value at most ${maxDepth} levels deep`,
      });
      return;
    }
    if (serialized.length > maxBytes)
      ctx.addIssue({ code: 'custom', message: `must be at most ${maxBytes} bytes of JSON` });
    else if (depth(value) > maxDepth)
      ctx.addIssue({ code: 'custom', message: `must be at most ${maxDepth} levels deep` });
  });
}

function depth(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let max = 0;
  for (const v of Object.values(value)) max = Math.max(max, depth(v));
  return max + 1;
}

/** An input object with organizationId plus the given fields. */
export function orgInput<T extends z.ZodRawShape>(shape: T) {
  return z.object({ organizationId, ...shape });
}
