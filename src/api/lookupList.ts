// The list procedure of a lookup table (lookupSalesType.list, lookupSource.list): search, status
// filter and the shared pagination, sorted by original unless pagination.sortBy says otherwise.
import { z } from 'zod';
import type { Queryable } from '../db/pool.ts';
import { statuses, statusFilter } from '../lookups/inputs.ts';
import type { LookupListOptions } from '../lookups/lookupTable.ts';
import { paginated, paginationSchema, resolvePage } from '../trpc/pagination.ts';
import { globalProcedure } from '../trpc/procedure.ts';

export function lookupListProcedure<Sort extends string, E>(
  summary: string,
  sorts: readonly [Sort, ...Sort[]],
  list: (db: Queryable, opts: LookupListOptions<Sort>) => Promise<{ rows: E[]; total: number }>,
) {
  const original = 'original' as Sort; // every lookup table sorts by its original by default
  return globalProcedure(
    { minRole: 'c2_superadmin', scope: 'admin', summary },
    // lookupSource.list's status is any JSON value in the specification: null, like absent, filters nothing
    z
      .object({
        pagination: paginationSchema(sorts),
        search: z.string().trim().max(200).optional(),
        status: statusFilter.nullable(),
      })
      .nullish(),
  ).query(async ({ ctx, input }) => {
    const page = resolvePage(input?.pagination, { sortBy: original });
    const { rows, total } = await list(ctx.deps.pool, {
      search: input?.search || undefined,
      statuses: statuses(input?.status ?? undefined),
      sortBy: page.sortBy ?? original,
      sortOrder: page.sortOrder,
      limit: page.limit,
      offset: page.offset,
    });
    return paginated(rows, page, total);
  });
}
