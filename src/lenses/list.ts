// lens.list: filters, four orders and keyset pagination. The cursor carries the order it was
// made for, the sort key of the last row and its id, so rows inserted between two pages never
// shift the later pages and a cursor cannot be replayed against another order.
import { cursorTimestamp, cursorUuid, timestampKey } from '../activity/paging.ts';
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import { likeContains } from '../db/sql.ts';
import { decodeCursor, encodeCursor, type CursorPage } from '../pagination.ts';
import {
  LENS_COLUMNS,
  LENS_FROM,
  toLens,
  type Lens,
  type LensKind,
  type LensRow,
  type LensScope,
  type LensViewer,
} from './store.ts';

export const lensSorts = ['updated_desc', 'created_desc', 'name_asc', 'last_opened_desc'] as const;
export type LensSort = (typeof lensSorts)[number];

/** A lens counts as recently opened for this long after the viewer last opened it. */
export const RECENT_DAYS = 30;

export interface LensFilter {
  kind?: LensKind | undefined;
  viewName?: string | undefined;
  scope?: LensScope | undefined;
  tag?: string | undefined;
  ownerUserId?: string | undefined;
  search?: string | undefined;
  pinnedOnly?: boolean | undefined;
  recentOnly?: boolean | undefined;
}

interface Order {
  /** the sort key as SQL */
  key: string;
  /** the key as exact text for the cursor, and the cast that reads it back */
  keyText: string;
  cast: string;
  direction: 'ASC' | 'DESC';
  /** last_opened_desc: lenses never opened come last */
  nullable: boolean;
  parseKey(value: unknown): string | null;
}

const text = (value: unknown) => {
  if (typeof value !== 'string') throw new AppError('INVALID_CURSOR');
  return value;
};

function timestampOrder(column: string, nullable: boolean): Order {
  return {
    key: column,
    keyText: timestampKey(column),
    cast: '::timestamptz',
    direction: 'DESC',
    nullable,
    parseKey: cursorTimestamp,
  };
}

const orders: Record<LensSort, Order> = {
  updated_desc: timestampOrder('l.updated_at', false),
  created_desc: timestampOrder('l.created_at', false),
  name_asc: {
    key: 'lower(l.name)',
    keyText: 'lower(l.name)',
    cast: '::text',
    direction: 'ASC',
    nullable: false,
    parseKey: text,
  },
  last_opened_desc: {
    ...timestampOrder('v.last_visited_at', true),
    parseKey: (value) => (value === null ? null : cursorTimestamp(value)),
  },
};

function filterClauses(filter: LensFilter, params: unknown[]): string[] {
  const clauses: string[] = [];
  const add = (sql: (p: string) => string, value: unknown) => {
    params.push(value);
    clauses.push(sql(`$${params.length}`));
  };
  if (filter.kind !== undefined) add((p) => `l.kind = ${p}`, filter.kind);
  if (filter.viewName !== undefined)
    add((p) => `l.view_name = to_jsonb(${p}::text)`, filter.viewName);
  if (filter.scope !== undefined) add((p) => `l.scope = ${p}`, filter.scope);
  if (filter.tag !== undefined)
    add(
      (p) =>
        `EXISTS (SELECT 1 FROM unnest(l.tags) AS t(tag) WHERE lower(t.tag) = lower(${p}::text))`,
      filter.tag,
    );
  if (filter.ownerUserId !== undefined)
    add((p) => `l.owner_user_id = ${p}::uuid`, filter.ownerUserId);
  if (filter.search) {
    add(
      (p) =>
        `(l.name ILIKE ${p} OR (jsonb_typeof(l.description) = 'string' AND l.description #>> '{}' ILIKE ${p}))`,
      likeContains(filter.search),
    );
  }
  if (filter.pinnedOnly) clauses.push('p.user_id IS NOT NULL');
  if (filter.recentOnly)
    clauses.push(`v.last_visited_at > clock_timestamp() - interval '${RECENT_DAYS} days'`);
  return clauses;
}

/** The rows after the cursor's position, in the order's direction with the id as tie-breaker. */
function afterCursor(order: Order, key: string | null, id: string, params: unknown[]): string {
  const cmp = order.direction === 'ASC' ? '>' : '<';
  params.push(id);
  const idParam = `$${params.length}::uuid`;
  if (key === null) return `(${order.key} IS NULL AND l.id ${cmp} ${idParam})`;
  params.push(key);
  const keyParam = `$${params.length}${order.cast}`;
  const keyed = `(${order.key} ${cmp} ${keyParam} OR (${order.key} = ${keyParam} AND l.id ${cmp} ${idParam}))`;
  return order.nullable ? `(${keyed} OR ${order.key} IS NULL)` : keyed;
}

export async function listLenses(
  db: Queryable,
  viewer: LensViewer,
  filter: LensFilter,
  page: { sort: LensSort; cursor?: string | null | undefined; limit: number },
): Promise<CursorPage<Lens>> {
  const order = orders[page.sort];
  const params: unknown[] = [viewer.organizationId, viewer.userId];
  const where = filterClauses(filter, params);
  if (page.cursor) {
    const [sort, key, id] = decodeCursor(page.cursor, 3);
    if (sort !== page.sort)
      throw new AppError('INVALID_CURSOR', 'The cursor was made for another sort order');
    where.push(afterCursor(order, order.parseKey(key), cursorUuid(id), params));
  }
  params.push(page.limit + 1);
  const nulls = order.nullable ? ' NULLS LAST' : '';
  const { rows } = await db.query<LensRow & { sort_key: string | null }>(
    `SELECT ${LENS_COLUMNS}, ${order.keyText} AS sort_key
     ${LENS_FROM} ${where.map((w) => `AND ${w}`).join(' ')}
     ORDER BY ${order.key} ${order.direction}${nulls}, l.id ${order.direction}
     LIMIT $${params.length}`,
    params,
  );
  const more = rows.length > page.limit;
  const pageRows = rows.slice(0, page.limit);
  const last = pageRows[pageRows.length - 1];
  return {
    data: pageRows.map(toLens),
    nextCursor: more && last ? encodeCursor([page.sort, last.sort_key, last.id]) : null,
  };
}
