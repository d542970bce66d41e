// The activity log. Every mutation of the service records who did what to which subject, and
// what changed, in the same transaction as the change: pass the transaction's client as `db`.
import type { Principal } from '../auth/principal.ts';
import type { Queryable } from '../db/pool.ts';

export const subjectTypes = ['rightsholder', 'file', 'upload', 'export', 'product', 'mapping', 'lens', 'chat', 'organization', 'user'] as const;
export type SubjectType = (typeof subjectTypes)[number];

export type FieldChanges = Record<string, { before: unknown; after: unknown }>;

export interface ActivityInput {
  organizationId: string;
  /** the procedure or verb, e.g. 'rightsholder.updateById' */
  action: string;
  subjectType: SubjectType;
  subjectId: string;
  subjectLabel?: string | null;
  changes?: FieldChanges | null;
  /** set for events about something only this member may see (a personal lens): hidden from everybody else */
  visibleToUserId?: string | null;
}

export async function recordActivity(db: Queryable, actor: Pick<Principal, 'userId' | 'apiKey'> | null, event: ActivityInput): Promise<void> {
  await db.query(
    `INSERT INTO activity_events (organization_id, actor_user_id, api_key_id, action, subject_type, subject_id, subject_label, changes, visible_to_user_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      event.organizationId,
      actor?.userId ?? null,
      actor?.apiKey?.id ?? null,
      event.action,
      event.subjectType,
      event.subjectId,
      event.subjectLabel ?? null,
      event.changes ? JSON.stringify(event.changes) : null,
      event.visibleToUserId ?? null,
    ],
  );
}

/** Field-level before/after of the given fields that differ (compared as JSON). */
export function diffFields<T extends Record<string, unknown>>(before: T, after: T, fields: readonly (keyof T & string)[]): FieldChanges | null {
  const changes: FieldChanges = {};
  for (const field of fields) {
    if (JSON.stringify(before[field] ?? null) !== JSON.stringify(after[field] ?? null)) {
      changes[field] = { before: before[field] ?? null, after: after[field] ?? null };
    }
  }
  return Object.keys(changes).length > 0 ? changes : null;
}
