import { z } from 'zod';
import { getRightsholderSort } from '../../organizations/preferences.ts';
import { rightsholderAccess } from '../../rightsholders/service.ts';
import {
  listRightsholders,
  rightsholderSorts,
  type RightsholderOrder,
  type RightsholderSortBy,
} from '../../rightsholders/store.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { plainText } from '../../activity/inputs.ts';
import { orgInput } from '../../trpc/schemas.ts';

function isSortBy(value: string | undefined): value is RightsholderSortBy {
  return (rightsholderSorts as readonly (string | undefined)[]).includes(value);
}

export const list = orgProcedure(
  {
    minRole: 'member',
    scope: 'cli',
    summary:
      "Rightsholders of the organization, in the caller's home-page order (user.setRightsholderSort) unless pagination.sortBy (name, createdAt, updatedAt) is given; search matches name, legal name and aliases.",
  },
  orgInput({
    pagination: paginationSchema(rightsholderSorts),
    // in NFC, as names are stored: a search typed with a combining accent finds the composed name
    search: plainText(200)
      .trim()
      .transform((v) => v.normalize('NFC'))
      .optional(),
    includeDeleted: z.boolean().default(false),
  }),
).query(async ({ ctx, input }) => {
  const db = ctx.deps.pool;
  const page = resolvePage(input.pagination);
  const order: RightsholderOrder = isSortBy(page.sortBy)
    ? { kind: 'explicit', sortBy: page.sortBy, sortOrder: page.sortOrder }
    : { kind: 'preference', sort: await getRightsholderSort(db, ctx.org.id, ctx.principal.userId) };
  const { rows, total } = await listRightsholders(
    db,
    rightsholderAccess(ctx.org, ctx.principal.userId),
    {
      search: input.search || undefined,
      includeDeleted: input.includeDeleted,
      order,
      limit: page.limit,
      offset: page.offset,
    },
  );
  return paginated(rows, page, total);
});
