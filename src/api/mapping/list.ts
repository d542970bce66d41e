import { z } from 'zod';
import { plainText } from '../../activity/inputs.ts';
import { listMappings, mappingSorts, mappingSortOf } from '../../ingest/mappings.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { list as boundedList, orgInput } from '../../trpc/schemas.ts';

export const list = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      "Mappings the organization sees: its own and the shared library's (source: all, organization or library), optionally only the given ids or a name search; sortBy name (default), createdAt, updatedAt, revision.",
  },
  orgInput({
    pagination: paginationSchema(mappingSorts),
    ids: boundedList(z.uuid(), 1_000).optional(),
    source: z.enum(['all', 'organization', 'library']).default('all'),
    search: plainText(200).trim().optional(),
  }),
).query(async ({ ctx, input }) => {
  const page = resolvePage(input.pagination, { sortBy: 'name' });
  const { rows, total } = await listMappings(ctx.deps.pool, ctx.org.id, {
    ids: input.ids,
    source: input.source === 'all' ? undefined : input.source,
    search: input.search || undefined,
    sortBy: mappingSortOf(page.sortBy),
    sortOrder: page.sortOrder,
    limit: page.limit,
    offset: page.offset,
  });
  return paginated(rows, page, total);
});
