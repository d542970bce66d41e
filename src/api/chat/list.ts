import { plainText } from '../../activity/inputs.ts';
import { chatSorts, listChatsOfUser } from '../../ai/chatStore.ts';
import { paginated, paginationSchema, resolvePage } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const list = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      "The caller's own chats in the organization, in the shared pagination envelope; most recently updated first unless pagination.sortBy (updatedAt, createdAt, title) is given; search matches the title.",
  },
  orgInput({ pagination: paginationSchema(chatSorts), search: plainText(200).trim().optional() }),
).query(async ({ ctx, input }) => {
  const page = resolvePage(input.pagination);
  const { rows, total } = await listChatsOfUser(ctx.deps.pool, ctx.org.id, ctx.principal.userId, {
    search: input.search || undefined,
    sortBy: page.sortBy,
    sortOrder: page.sortOrder,
    limit: page.limit,
    offset: page.offset,
  });
  return paginated(rows, page, total);
});
