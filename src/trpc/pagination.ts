// The shared pagination envelope of the specification, and cursor pagination for the lists that
// use `cursor`.
import { z } from 'zod';
import { AppError } from '../errors.ts';

export const MAX_LIMIT = 2000;
/** limit when `pagination` is omitted */
export const DEFAULT_LIMIT = 300;
/** limit when `pagination` is given without one */
export const DEFAULT_INNER_LIMIT = 200;

/**
 * The pagination input; with `sortBy` values given, only those are accepted (and typed). A list
 * shown newest first by default (uploads, exports) passes `sortOrder: 'desc'`; a sortOrder sent is
 * always followed.
 */
export function paginationSchema<S extends string = string>(sortBy?: readonly [S, ...S[]], defaults: { sortOrder?: 'asc' | 'desc' } = {}) {
  const sort = (sortBy ? z.enum(sortBy as unknown as [S, ...S[]]) : z.string().max(100)) as z.ZodType<S>;
  return z
    .object({
      page: z.number().int().min(1).max(1_000_000).default(1),
      // the maximum is checked after parsing so that it answers with its own errorCode
      limit: z.number().int().min(1).describe(`1 to ${MAX_LIMIT}; above ${MAX_LIMIT} is PAGINATION_LIMIT_EXCEEDED`).optional(),
      sortBy: sort.optional(),
      sortOrder: z.enum(['asc', 'desc']).default(defaults.sortOrder ?? 'asc'),
    })
    .optional();
}

export interface Page<S extends string = string> {
  page: number;
  limit: number;
  offset: number;
  sortBy: S | undefined;
  sortOrder: 'asc' | 'desc';
}

export function resolvePage<S extends string>(
  input: { page: number; limit?: number | undefined; sortBy?: S | undefined; sortOrder: 'asc' | 'desc' } | undefined,
  defaults: { limit?: number; innerLimit?: number; sortBy?: S; sortOrder?: 'asc' | 'desc' } = {},
): Page<S> {
  if (input === undefined) {
    const limit = defaults.limit ?? DEFAULT_LIMIT;
    return { page: 1, limit, offset: 0, sortBy: defaults.sortBy, sortOrder: defaults.sortOrder ?? 'asc' };
  }
  const limit = input.limit ?? defaults.innerLimit ?? DEFAULT_INNER_LIMIT;
  if (limit > MAX_LIMIT) {
    throw new AppError('PAGINATION_LIMIT_EXCEEDED', `pagination.limit must be at most ${MAX_LIMIT}`);
  }
  return {
    page: input.page,
    limit,
    offset: (input.page - 1) * limit,
    sortBy: input.sortBy ?? defaults.sortBy,
    sortOrder: input.sortOrder,
  };
}

export interface Paginated<T> {
  data: T[];
  pagination: { page: number; limit: number; total: number; totalPages: number; hasNext: boolean; hasPrev: boolean };
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
