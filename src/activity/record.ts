// The activity log. Every mutation of the service records who did what to which subject, and
// what changed, in the same transaction as the change: pass the transaction's client as `db`.
import type { Principal } from '../auth/principal.ts';
import type { Queryable } from '../db/pool.ts';

export const subjectTypes = [
  'rightsholder',
  'file',
  'upload',
  'export',
  'product',
  'mapping',
  'lens',
  'chat',
  'organization',
  'user',
] as const;
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
  /**
   * The rightsholders the event is about, when its subject does not tell them (a removed file, a
   * data-access role): a member restricted to some rightsholders sees it only if they may see every
   * one of them. Unset for a subject that tells them (rightsholder, file, upload, export, product).
   */
  rightsholderIds?: string[];
}

/** Subjects that belong to rightsholders: the ids, read when the event is recorded. */
const RIGHTSHOLDERS_OF: Partial<Record<SubjectType, string>> = {
  rightsholder: `SELECT array_agg(id) AS ids FROM rightsholders WHERE id::text = $1 AND organization_id = $2`,
  file: `SELECT array_agg(rightsholder_id) AS ids FROM statements WHERE id::text = $1 AND organization_id = $2`,
  upload: `SELECT array_agg(DISTINCT rightsholder_id) AS ids FROM statements WHERE upload_id::text = $1 AND organization_id = $2`,
  export: `SELECT rightsholder_ids AS ids FROM exports WHERE id::text = $1 AND organization_id = $2`,
  product: `SELECT array_agg(b.rightsholder_id) AS ids FROM products p JOIN catalog_blocks b ON b.id = p.block_id WHERE p.id::text = $1 AND p.organization_id = $2`,
};

/** null: about no rightsholder; [] about rightsholders no longer known (shown to unrestricted members only). */
async function rightsholdersOf(db: Queryable, event: ActivityInput): Promise<string[] | null> {
  if (event.rightsholderIds) return [...new Set(event.rightsholderIds)];
  const sql = RIGHTSHOLDERS_OF[event.subjectType];
  if (!sql) return null;
  const { rows } = await db.query<{ ids: string[] | null }>(sql, [
    event.subjectId,
    event.organizationId,
  ]);
  return rows[0]?.ids ?? [];
}

export async function recordActivity(
  db: Queryable,
  actor: Pick<Principal, 'userId' | 'apiKey' | 'oauth'> | null,
  event: ActivityInput,
): Promise<void> {
  const rightsholderIds = await rightsholdersOf(db, event);
  await db.query(
    `INSERT INTO activity_events (organization_id, actor_user_id, api_key_id, oauth_client_id, action, subject_type, subject_id, subject_label, changes, visible_to_user_id, rightsholder_ids)
     VALUES ($1, $2, $3, $11, $4, $5, $6, $7, $8, $9, $10)`,
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
      rightsholderIds,
      actor?.oauth?.clientId ?? null,
    ],
  );
}

/** Field-level before/after of the given fields that differ (compared as JSON). */
export function diffFields<T extends Record<string, unknown>>(
  before: T,
  after: T,
  fields: readonly (keyof T & string)[],
): FieldChanges | null {
  const changes: FieldChanges = {};
  for (const field of fields) {
    if (JSON.stringify(before[field] ?? null) !== JSON.stringify(after[field] ?? null)) {
      changes[field] = { before: before[field] ?? null, after: after[field] ?? null };
    }
  }
  return Object.keys(changes).length > 0 ? changes : null;
}
