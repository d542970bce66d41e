import { z } from 'zod';
import { plainText } from '../../activity/inputs.ts';
import { checkCursorLimit, cursorLimit } from '../../activity/paging.ts';
import { lensSorts, listLenses } from '../../lenses/list.ts';
import { lensKinds, lensScopes } from '../../lenses/store.ts';
import { cursorSchema } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { tag } from './fields.ts';
import { lensViewer } from './viewer.ts';

export const list = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      'Lenses the caller may see, by cursor ({ data, nextCursor }); filters kind, viewName, scope, tag, ownerUserId, search, pinnedOnly, recentOnly (opened in the last 30 days); sort updated_desc (default), created_desc, name_asc, last_opened_desc.',
  },
  orgInput({
    kind: z.enum(lensKinds).optional(),
    viewName: plainText(1_000).optional(),
    scope: z.enum(lensScopes).optional(),
    tag: tag.optional(),
    ownerUserId: z.uuid().optional(),
    search: plainText(200).trim().optional(),
    pinnedOnly: z.boolean().default(false),
    recentOnly: z.boolean().default(false),
    sort: z.enum(lensSorts).default('updated_desc'),
    cursor: cursorSchema.nullable(),
    limit: cursorLimit,
  }),
).query(({ ctx, input }) => {
  const { sort, cursor, limit, organizationId: _org, ...filter } = input;
  return listLenses(ctx.deps.pool, lensViewer(ctx), filter, {
    sort,
    cursor,
    limit: checkCursorLimit(limit),
  });
});
