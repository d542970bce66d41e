// Chats in PostgreSQL: a member's own conversations in an organization (chat.list).
import type { Queryable } from '../db/pool.ts';
import { likeContains, sortDirection } from '../db/sql.ts';

export interface Chat {
  id: string;
  organizationId: string;
  title: string | null;
  createdAt: string;
  updatedAt: string;
}

interface ChatRow {
  id: string;
  organization_id: string;
  title: string | null;
  created_at: Date;
  updated_at: Date;
}

export const chatSorts = ['updatedAt', 'createdAt', 'title'] as const;
export type ChatSort = (typeof chatSorts)[number];

const columns: Record<ChatSort, string> = {
  updatedAt: 'updated_at',
  createdAt: 'created_at',
  title: 'lower(title)',
};

function orderBy(sortBy: string | undefined, sortOrder: 'asc' | 'desc'): string {
  const sort = (chatSorts as readonly string[]).includes(sortBy ?? '')
    ? (sortBy as ChatSort)
    : undefined;
  // without a sortBy: the conversations touched last first, as an assistant's history reads
  if (!sort) return 'updated_at DESC, id DESC';
  const dir = sortDirection(sortOrder);
  return `${columns[sort]} ${dir} NULLS LAST, id ${dir}`;
}

/** The user's chats in the organization, a page of them and how many match; `search` matches the title. */
export async function listChatsOfUser(
  db: Queryable,
  organizationId: string,
  userId: string,
  opts: {
    search: string | undefined;
    sortBy: string | undefined;
    sortOrder: 'asc' | 'desc';
    limit: number;
    offset: number;
  },
): Promise<{ rows: Chat[]; total: number }> {
  const params: unknown[] = [organizationId, userId];
  let where = 'organization_id = $1 AND user_id = $2';
  if (opts.search) {
    params.push(likeContains(opts.search));
    where += ` AND title ILIKE $${params.length}`;
  }
  const count = await db.query<{ total: number }>(
    `SELECT count(*) AS total FROM chats WHERE ${where}`,
    params,
  );
  const { rows } = await db.query<ChatRow>(
    `SELECT id, organization_id, title, created_at, updated_at FROM chats WHERE ${where}
     ORDER BY ${orderBy(opts.sortBy, opts.sortOrder)} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, opts.limit, opts.offset],
  );
  const chats = rows.map((r) => ({
    id: r.id,
    organizationId: r.organization_id,
    title: r.title,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  }));
  return { rows: chats, total: count.rows[0]!.total };
}
