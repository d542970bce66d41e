import { z } from 'zod';
import { visibleBlock } from '../../catalog/blockStore.ts';
import {
  clusterMemberPages,
  clusterPageOfBlock,
  clusterSorts,
  countClustersOfBlock,
} from '../../catalog/clusterStore.ts';
import { callerOf } from '../../catalog/musicalDetails.ts';
import { AppError } from '../../errors.ts';
import { MAX_LIMIT, paginated } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { entriesOf } from './entries.ts';

// the maximum is checked after parsing, as every list's limit, so that it answers with its own errorCode
const limit = (fallback: number) => z.number().int().min(1).default(fallback);

export const getTitleClustering = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      'The title clusters of a block with their entries, paginated twice: pagination { page (1), limit (50 without pagination, 20 when pagination is given without it), innerPage (1), innerLimit (20) } (limits at most 2000); clusters sorted by sortField entries (default) | titleDisplay | similarity | earnings, sortDirection desc (default) | asc, ties by id; the entries of each cluster highest USD earnings first, each cluster with musicalDetails: { data, pagination } in the shared envelope (entries is the count).',
  },
  orgInput({
    blockId: z.uuid(),
    // the specification's defaults: page 1 and limit 50 without pagination, but limit 20 when
    // pagination is given without one (its inner default), like the shared envelope's 300 and 200
    pagination: z
      .object({
        page: z.number().int().min(1).max(1_000_000).default(1),
        limit: limit(20),
        innerPage: z.number().int().min(1).max(1_000_000).default(1),
        innerLimit: limit(20),
      })
      .default({ page: 1, limit: 50, innerPage: 1, innerLimit: 20 }),
    sortField: z.enum(clusterSorts).default('entries'),
    sortDirection: z.enum(['asc', 'desc']).default('desc'),
  }),
).query(async ({ ctx, input }) => {
  const caller = callerOf(ctx.org);
  const db = ctx.deps.pool;
  const block = await visibleBlock(db, caller, input.blockId);
  const { page, limit: size, innerPage, innerLimit } = input.pagination;
  for (const [field, value] of [
    ['limit', size],
    ['innerLimit', innerLimit],
  ] as const) {
    if (value > MAX_LIMIT)
      throw new AppError(
        'PAGINATION_LIMIT_EXCEEDED',
        `pagination.${field} must be at most ${MAX_LIMIT}`,
      );
  }
  const total = await countClustersOfBlock(db, block.id);
  const clusters = await clusterPageOfBlock(db, block.id, {
    sortBy: input.sortField,
    sortOrder: input.sortDirection,
    limit: size,
    offset: (page - 1) * size,
  });
  const members = await clusterMemberPages(
    db,
    block.id,
    clusters.map((c) => c.id),
    { limit: innerLimit, offset: (innerPage - 1) * innerLimit },
  );
  const entries = await entriesOf(
    db,
    caller,
    block.id,
    members.map((m) => m.id),
  );
  const inner = {
    page: innerPage,
    limit: innerLimit,
    offset: (innerPage - 1) * innerLimit,
    sortBy: 'earnings',
    sortOrder: 'desc' as const,
  };
  const data = clusters.map((c) => ({
    ...c,
    musicalDetails: paginated(
      members.filter((m) => m.clusterId === c.id).map((m) => entries.get(m.id)!),
      inner,
      c.entries,
    ),
  }));
  return paginated(
    data,
    {
      page,
      limit: size,
      offset: (page - 1) * size,
      sortBy: input.sortField,
      sortOrder: input.sortDirection,
    },
    total,
  );
});
