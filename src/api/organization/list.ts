import { z } from 'zod';
import { listOrganizations, organizationSorts } from '../../organizations/organizations.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { globalProcedure } from '../../trpc/procedure.ts';
import { text } from '../../trpc/schemas.ts';

export const list = globalProcedure(
  {
    minRole: 'c2_superadmin',
    scope: 'admin',
    summary:
      'All organizations (platform operators only), soft-deleted ones only with includeDeleted; optional name search.',
  },
  z
    .object({
      pagination: paginationSchema(organizationSorts),
      includeDeleted: z.boolean().default(false),
      search: text(200).optional(),
    })
    .nullish(),
).query(async ({ ctx, input }) => {
  const page = resolvePage(input?.pagination, { sortBy: 'name' });
  const { rows, total } = await listOrganizations(ctx.deps.pool, {
    includeDeleted: input?.includeDeleted ?? false,
    search: input?.search || undefined,
    sortBy: organizationSorts.find((s) => s === page.sortBy) ?? 'name',
    sortOrder: page.sortOrder,
    limit: page.limit,
    offset: page.offset,
  });
  return paginated(rows, page, total);
});
