// Reading the activity log: the organization's feed and one subject's history, newest first,
// by keyset on the event id (ids only grow, so events recorded between two pages never shift
// the later pages).
import { allInRightsholderScope, type RightsholderScope } from '../access/dataAccess.ts';
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import { decodeCursor, encodeCursor, type CursorPage } from '../pagination.ts';
import type { FieldChanges, SubjectType } from './record.ts';

export interface ActivityEvent {
  id: string;
  action: string;
  subjectType: SubjectType;
  subjectId: string;
  subjectLabel: string | null;
  changes: FieldChanges | null;
  /** null when the acting user's account no longer exists (or nobody acted: a system job) */
  actor: { userId: string; email: string } | null;
  createdAt: string;
}

/** Who is reading: events about what they may not see are left out. */
export interface ActivityViewer {
  organizationId: string;
  userId: string;
  rightsholderScope: RightsholderScope;
}

export interface ActivityFilter {
  subjectType?: SubjectType | undefined;
  subjectId?: string | undefined;
  actorUserId?: string | undefined;
  action?: string | undefined;
}

interface EventRow {
  id: string;
  action: string;
  subject_type: SubjectType;
  subject_id: string;
  subject_label: string | null;
  changes: FieldChanges | null;
  actor_user_id: string | null;
  actor_email: string | null;
  created_at: Date;
}

function visibility(viewer: ActivityViewer, params: unknown[]): string {
  params.push(viewer.organizationId, viewer.userId);
  const org = `$${params.length - 1}`;
  const me = `$${params.length}`;
  const clauses = [
    `e.organization_id = ${org}`,
    `(e.visible_to_user_id IS NULL OR e.visible_to_user_id = ${me})`,
  ];
  if (viewer.rightsholderScope !== null) {
    params.push(viewer.rightsholderScope);
    // an event about rightsholders only when the viewer may see every one of them; one whose
    // rightsholders are no longer known ({}) only by unrestricted members
    clauses.push(
      `(e.rightsholder_ids IS NULL OR (cardinality(e.rightsholder_ids) > 0 AND ${allInRightsholderScope('e.rightsholder_ids', `$${params.length}`)}))`,
    );
  }
  return clauses.join(' AND ');
}

function filters(filter: ActivityFilter, params: unknown[]): string[] {
  const clauses: string[] = [];
  const add = (sql: (p: string) => string, value: unknown) => {
    params.push(value);
    clauses.push(sql(`$${params.length}`));
  };
  if (filter.subjectType !== undefined) add((p) => `e.subject_type = ${p}`, filter.subjectType);
  if (filter.subjectId !== undefined) add((p) => `e.subject_id = ${p}`, filter.subjectId);
  if (filter.actorUserId !== undefined)
    add((p) => `e.actor_user_id = ${p}::uuid`, filter.actorUserId);
  if (filter.action !== undefined) add((p) => `e.action = ${p}`, filter.action);
  return clauses;
}

function cursorId(cursor: string): string {
  const [id] = decodeCursor(cursor, 1);
  if (typeof id !== 'string' || !/^[1-9]\d{0,17}$/.test(id)) throw new AppError('INVALID_CURSOR');
  return id;
}

export async function listActivity(
  db: Queryable,
  viewer: ActivityViewer,
  filter: ActivityFilter,
  page: { cursor?: string | null | undefined; limit: number },
): Promise<CursorPage<ActivityEvent>> {
  const params: unknown[] = [];
  const where = [visibility(viewer, params), ...filters(filter, params)];
  if (page.cursor) {
    params.push(cursorId(page.cursor));
    where.push(`e.id < $${params.length}::bigint`);
  }
  params.push(page.limit + 1);
  const { rows } = await db.query<EventRow>(
    `SELECT e.id::text AS id, e.action, e.subject_type, e.subject_id, e.subject_label, e.changes,
            u.id AS actor_user_id, u.email AS actor_email, e.created_at
     FROM activity_events e
     LEFT JOIN users u ON u.id = e.actor_user_id
     WHERE ${where.join(' AND ')}
     ORDER BY e.id DESC
     LIMIT $${params.length}`,
    params,
  );
  const more = rows.length > page.limit;
  const data = rows.slice(0, page.limit).map((row) => toEvent(row, viewer.organizationId));
  return { data, nextCursor: more ? encodeCursor([data[data.length - 1]!.id]) : null };
}

/** Whether the viewer may see at least one event about the subject (its history outlives it). */
export async function hasVisibleActivity(
  db: Queryable,
  viewer: ActivityViewer,
  subjectType: SubjectType,
  subjectId: string,
): Promise<boolean> {
  const params: unknown[] = [];
  const where = [visibility(viewer, params), ...filters({ subjectType, subjectId }, params)];
  const { rowCount } = await db.query(
    `SELECT 1 FROM activity_events e WHERE ${where.join(' AND ')} LIMIT 1`,
    params,
  );
  return (rowCount ?? 0) > 0;
}

/**
 * An API key event (`changes.apiKey`) names of the key's organizations only the reader's: a key
 * may span several, and the others are none of this organization's business. Events recorded
 * before the log was written so still hold every id, so they are filtered here, on reading.
 */
function ownOrganizationOnly(
  changes: FieldChanges | null,
  organizationId: string,
): FieldChanges | null {
  const apiKey = changes?.apiKey;
  if (!changes || !apiKey) return changes;
  const narrowed = (side: unknown) => {
    if (
      side === null ||
      typeof side !== 'object' ||
      !Array.isArray((side as { organizationIds?: unknown }).organizationIds)
    )
      return side;
    const ids = (side as { organizationIds: unknown[] }).organizationIds;
    return {
      ...side,
      organizationIds: ids.filter(
        (id) => typeof id === 'string' && id.toLowerCase() === organizationId.toLowerCase(),
      ),
    };
  };
  return { ...changes, apiKey: { before: narrowed(apiKey.before), after: narrowed(apiKey.after) } };
}

function toEvent(row: EventRow, organizationId: string): ActivityEvent {
  return {
    id: row.id,
    action: row.action,
    subjectType: row.subject_type,
    subjectId: row.subject_id,
    subjectLabel: row.subject_label,
    changes: ownOrganizationOnly(row.changes, organizationId),
    actor:
      row.actor_user_id && row.actor_email
        ? { userId: row.actor_user_id, email: row.actor_email }
        : null,
    createdAt: row.created_at.toISOString(),
  };
}
