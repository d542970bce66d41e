import { z } from 'zod';

/** A calendar date as YYYY-MM-DD from 0001-01-01 on (2024-02-30 and year 0000 are refused). */
export const calendarDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date as YYYY-MM-DD')
  .refine((s) => {
    const d = new Date(`${s}T00:00:00Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s && s >= '0001-01-01';
  }, 'must be a real calendar date');

/**
 * The last day a published figure (a rate, a price, a yield) may carry: tomorrow in UTC, so a file
 * published late in the day anywhere is accepted. A later day is a typo (2204 for 2024) that would
 * become the latest day every "latest" answer uses.
 */
export function lastPublishableDay(now = new Date()): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1))
    .toISOString()
    .slice(0, 10);
}
