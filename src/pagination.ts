// The shared pagination envelope of the specification, and cursor pagination for the lists that
// use `cursor`.
import { z } from 'zod';
import { AppError } from './errors.ts';

export const MAX_LIMIT = 2000;
/** limit when `pagination` is omitted */
export const DEFAULT_LIMIT = 300;
/** limit when `pagination` is given without one */
export const DEFAULT_INNER_LIMIT = 200;

/**
 * The pagination input of a list: `sortBy` is one of the fields of the list's items (`sorts`), any
 * other is VALIDATION_FAILED naming those accepted; `sortOrder` is `asc` unless sent, for every
 * list alike (the specification's default). The page sizes are zod defaults, so /docs/schemas.json
 * states exactly those applied: `limit` (300) when `pagination` is omitted, `innerLimit` (200)
 * when it is sent without a limit.
 */
export function paginationSchema<S extends string>(
  sorts: readonly [S, ...S[]],
  sizes: { limit?: number; innerLimit?: number } = {},
) {
  const accepted = sorts.join(', ');
  const sortBy = z
    .enum(sorts as unknown as [S, ...S[]], { error: () => `sortBy must be one of: ${accepted}` })
    .describe(`one of: ${accepted}`);
  const whole = { page: 1, limit: sizes.limit ?? DEFAULT_LIMIT, sortOrder: 'asc' as const };
  return z
    .object({
      page: z.number().int().min(1).max(1_000_000).default(1),
      // the maximum is checked after parsing (resolvePage) so that it answers with its own
      // errorCode; the schema states it all the same
      limit: z
        .number()
        .int()
        .min(1)
        .default(sizes.innerLimit ?? DEFAULT_INNER_LIMIT)
        .meta({
          maximum: MAX_LIMIT,
          description: `1 to ${MAX_LIMIT}; above ${MAX_LIMIT} is PAGINATION_LIMIT_EXCEEDED`,
        }),
      sortBy: (sortBy as unknown as z.ZodType<S>).optional(),
      sortOrder: z.enum(['asc', 'desc']).default('asc'),
    })
    .default(whole);
}

export interface Page<S extends string = string> {
  page: number;
  limit: number;
  offset: number;
  sortBy: S | undefined;
  sortOrder: 'asc' | 'desc';
}

/**
 * The page of a parsed pagination input; `undefined` (a list whose whole input is optional and
 * was omitted) is the shared default page.
 */
export function resolvePage<S extends string>(
  input:
    { page: number; limit: number; sortBy?: S | undefined; sortOrder: 'asc' | 'desc' } | undefined,
  defaults: { sortBy?: S } = {},
): Page<S> {
  const { page, limit, sortBy, sortOrder } = input ?? {
    page: 1,
    limit: DEFAULT_LIMIT,
    sortBy: undefined,
    sortOrder: 'asc' as const,
  };
  if (limit > MAX_LIMIT) {
    throw new AppError(
      'PAGINATION_LIMIT_EXCEEDED',
      `pagination.limit must be at most ${MAX_LIMIT}`,
    );
  }
  return { page, limit, offset: (page - 1) * limit, sortBy: sortBy ?? defaults.sortBy, sortOrder };
}

export interface Paginated<T> {
  data: T[];
  pagination: {
    page: number;
    limit: number;
    total: number;
    totalPages: number;
    hasNext: boolean;
    hasPrev: boolean;
  };
}

export function paginated<T>(data: T[], page: Page, total: number): Paginated<T> {
  const totalPages = Math.ceil(total / page.limit);
  return {
    data,
    pagination: {
      page: page.page,
      limit: page.limit,
      total,
      totalPages,
      hasNext: page.page < totalPages,
      hasPrev: page.page > 1,
    },
  };
}

// Cursor pagination: the cursor is an opaque, base64url-encoded JSON tuple of the sort key
// values of the last row, so it stays stable under concurrent inserts (keyset pagination).
export const cursorSchema = z.string().max(1_000).optional();

export function encodeCursor(values: readonly (string | number | null)[]): string {
  return Buffer.from(JSON.stringify(values), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, arity: number): (string | number | null)[] {
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    values = undefined;
  }
  if (
    !Array.isArray(values) ||
    values.length !== arity ||
    !values.every((v) => v === null || typeof v === 'string' || typeof v === 'number')
  ) {
    throw new AppError('INVALID_CURSOR');
  }
  return values as (string | number | null)[];
}

export interface CursorPage<T> {
  data: T[];
  nextCursor: string | null;
}
