// One page of a filtered table and the total behind it, for the shared pagination envelope.
import type { Queryable } from '../db/pool.ts';

export interface PagedQuery {
  columns: string;
  from: string;
  /** conditions joined with AND; placeholders number into `params` */
  where: string[];
  params: unknown[];
  orderBy: string;
  /** parameters only the ORDER BY uses, numbered after `params` */
  orderParams?: unknown[];
  limit: number;
  offset: number;
}

export async function pagedRows<R extends object>(
  db: Queryable,
  q: PagedQuery,
): Promise<{ rows: R[]; total: number }> {
  const where = q.where.length > 0 ? `WHERE ${q.where.join(' AND ')}` : '';
  const pageParams = [...q.params, ...(q.orderParams ?? [])];
  const n = pageParams.length;
  const [page, count] = await Promise.all([
    db.query<R>(
      `SELECT ${q.columns} FROM ${q.from} ${where} ORDER BY ${q.orderBy} LIMIT $${n + 1} OFFSET $${n + 2}`,
      [...pageParams, q.limit, q.offset],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${q.from} ${where}`, q.params),
  ]);
  return { rows: page.rows, total: count.rows[0]!.n };
}
