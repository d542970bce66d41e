import { z } from 'zod';
import { missingRawValues, missingSorts } from '../../lookups/missing.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { globalProcedure } from '../../trpc/procedure.ts';

export const missingSalesTypes = globalProcedure(
  {
    minRole: 'c2_superadmin',
    scope: 'admin',
    summary:
      'Raw sales types in ingested statements (all organizations) that no lookup entry resolves, grouped by normalized form, with rows and USD carried; largest USD first, then most rows (pagination.sortBy usdAmount or rowCount to change).',
  },
  z.object({ pagination: paginationSchema(missingSorts) }).nullish(),
).query(async ({ ctx, input }) => {
  const page = resolvePage(input?.pagination);
  const { rows, total } = await missingRawValues(ctx.deps.pool, 'sales_type', page);
  return paginated(rows, page, total);
});
