import { z } from 'zod';
import { getMapping, listRevisions } from '../../../ingest/mappings.ts';
import { paginated, paginationSchema, resolvePage } from '../../../trpc/pagination.ts';
import { orgProcedure } from '../../../trpc/procedure.ts';
import { orgInput } from '../../../trpc/schemas.ts';

export const listByMapping = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      'The revisions of a mapping (every change is one), each with its full content and changedFields against the one before; pagination optional, sortBy revision, oldest first unless sortOrder desc.',
  },
  orgInput({ mappingId: z.uuid(), pagination: paginationSchema(['revision']) }),
).query(async ({ ctx, input }) => {
  const db = ctx.deps.pool;
  const page = resolvePage(input.pagination, { sortBy: 'revision' });
  await getMapping(db, ctx.org.id, input.mappingId);
  const { rows, total } = await listRevisions(db, input.mappingId, {
    sortOrder: page.sortOrder,
    limit: page.limit,
    offset: page.offset,
  });
  return paginated(rows, page, total);
});
