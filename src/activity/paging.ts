// Pieces shared by the cursor-paginated lists (activity.feed, activity.byEntity, lens.list): the
// `limit` field and exact, opaque sort keys for timestamps.
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { MAX_LIMIT } from '../pagination.ts';

export const DEFAULT_CURSOR_LIMIT = 50;

/** `limit` of a cursor list; the maximum is checked by checkCursorLimit so it answers with its own errorCode. */
export const cursorLimit = z.number().int().min(1).default(DEFAULT_CURSOR_LIMIT);

export function checkCursorLimit(limit: number): number {
  if (limit > MAX_LIMIT)
    throw new AppError('PAGINATION_LIMIT_EXCEEDED', `limit must be at most ${MAX_LIMIT}`);
  return limit;
}

/**
 * A timestamptz column as UTC text with all six fractional digits. A JavaScript Date keeps only
 * milliseconds, so a keyset bound taken from one would skip or repeat rows that differ by less.
 */
export function timestampKey(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

const TIMESTAMP_KEY_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** A timestamp taken back from a cursor; anything timestampKey could not have produced is INVALID_CURSOR. */
export function cursorTimestamp(value: unknown): string {
  if (typeof value !== 'string' || !TIMESTAMP_KEY_RE.test(value))
    throw new AppError('INVALID_CURSOR');
  const parsed = new Date(value);
  // Date accepts days that do not exist (Feb 30) by rolling over; PostgreSQL would not.
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 19) !== value.slice(0, 19))
    throw new AppError('INVALID_CURSOR');
  return value;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function cursorUuid(value: unknown): string {
  if (typeof value !== 'string' || !UUID_RE.test(value)) throw new AppError('INVALID_CURSOR');
  return value;
}

export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}
