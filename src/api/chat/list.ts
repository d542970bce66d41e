import { plainText } from '../../activity/inputs.ts';
import type { Queryable } from '../../db/pool.ts';
import { likeContains } from '../../db/sql.ts';
import { paginated, paginationSchema, resolvePage, type Page } from '../../trpc/pagination.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export interface Chat {
  id: string;
  organizationId: string;
  title: string | null;
  createdAt: string;
  updatedAt: string;
}

const chatSorts = ['updatedAt', 'createdAt', 'title'] as const;
type ChatSort = (typeof chatSorts)[number];

const columns: Record<ChatSort, string> = { updatedAt: 'updated_at', createdAt: 'created_at', title: 'lower(title)' };

function orderBy(page: Page): string {
  const sortBy = (chatSorts as readonly string[]).includes(page.sortBy ?? '') ? (page.sortBy as ChatSort) : undefined;
  // without a sortBy: the conversations touched last first, as an assistant's history reads
  if (!sortBy) return 'updated_at DESC, id DESC';
  const dir = page.sortOrder === 'desc' ? 'DESC' : 'ASC';
  return `${columns[sortBy]} ${dir} NULLS LAST, id ${dir}`;
}

async function listChats(db: Queryable, organizationId: string, userId: string, search: string | undefined, page: Page) {
  const params: unknown[] = [organizationId, userId];
  let where = 'organization_id = $1 AND user_id = $2';
  if (search) {
    params.push(likeContains(search));
    where += ` AND title ILIKE $${params.length}`;
  }
  const count = await db.query<{ total: number }>(`SELECT count(*) AS total FROM chats WHERE ${where}`, params);
  const { rows } = await db.query<{ id: string; organization_id: string; title: string | null; created_at: Date; updated_at: Date }>(
    `SELECT id, organization_id, title, created_at, updated_at FROM chats WHERE ${where}
     ORDER BY ${orderBy(page)} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, page.limit, page.offset],
  );
  const chats: Chat[] = rows.map((r) => ({
    id: r.id,
    organizationId: r.organization_id,
    title: r.title,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  }));
  return paginated(chats, page, count.rows[0]!.total);
}

export const list = orgProcedure(
  {
    minRole: 'member',
    scope: '',
    summary:
      "The caller's own chats in the organization, in the shared pagination envelope; most recently updated first unless pagination.sortBy (updatedAt, createdAt, title) is given; search matches the title.",
  },
  orgInput({ pagination: paginationSchema(chatSorts), search: plainText(200).trim().optional() }),
).query(({ ctx, input }) => listChats(ctx.deps.pool, ctx.org.id, ctx.principal.userId, input.search || undefined, resolvePage(input.pagination)));
