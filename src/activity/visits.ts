// Visits: that a member opened a subject, and when last. They feed the "last updated" and
// "recently opened" orderings. They are not activity events: every page view would flood the
// feed, and a visit changes nothing.
import type { Queryable } from '../db/pool.ts';
import type { SubjectType } from './record.ts';

export interface Visit {
  subjectType: SubjectType;
  subjectId: string;
  subjectLabel: string | null;
  visitCount: number;
  firstVisitedAt: string;
  lastVisitedAt: string;
}

export interface VisitInput {
  organizationId: string;
  userId: string;
  subjectType: SubjectType;
  subjectId: string;
  subjectLabel?: string | null | undefined;
}

export async function recordVisit(db: Queryable, visit: VisitInput): Promise<Visit> {
  const { rows } = await db.query<{
    subject_type: SubjectType;
    subject_id: string;
    subject_label: string | null;
    visit_count: number;
    first_visited_at: Date;
    last_visited_at: Date;
  }>(
    `INSERT INTO subject_visits (organization_id, user_id, subject_type, subject_id, subject_label)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (organization_id, user_id, subject_type, subject_id) DO UPDATE
       SET visit_count = subject_visits.visit_count + 1,
           last_visited_at = clock_timestamp(),
           subject_label = COALESCE(EXCLUDED.subject_label, subject_visits.subject_label)
     RETURNING subject_type, subject_id, subject_label, visit_count, first_visited_at, last_visited_at`,
    [
      visit.organizationId,
      visit.userId,
      visit.subjectType,
      visit.subjectId,
      visit.subjectLabel ?? null,
    ],
  );
  const row = rows[0]!;
  return {
    subjectType: row.subject_type,
    subjectId: row.subject_id,
    subjectLabel: row.subject_label,
    visitCount: row.visit_count,
    firstVisitedAt: row.first_visited_at.toISOString(),
    lastVisitedAt: row.last_visited_at.toISOString(),
  };
}

/** Removes every member's visits of one subject (the subject itself is being removed). */
export async function deleteVisits(
  db: Queryable,
  organizationId: string,
  subjectType: SubjectType,
  subjectId: string,
): Promise<number> {
  const { rowCount } = await db.query(
    'DELETE FROM subject_visits WHERE organization_id = $1 AND subject_type = $2 AND subject_id = $3',
    [organizationId, subjectType, subjectId],
  );
  return rowCount ?? 0;
}
