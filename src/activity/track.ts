// activity.trackVisit and its deprecated alias rightsholder.trackOpen. A visit to a subject the
// service keeps (a rightsholder, a lens) needs the subject to exist and be visible to the
// caller, and is labelled with its current name; visits to other subject types are recorded as
// given until those subjects exist in this service.
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import { getLens } from '../lenses/store.ts';
import { rightsholderAccess } from '../rightsholders/service.ts';
import { getRightsholder } from '../rightsholders/store.ts';
import { isUuid } from './paging.ts';
import type { SubjectType } from './record.ts';
import { recordVisit, type Visit } from './visits.ts';

export interface TrackVisitInput {
  organizationId: string;
  userId: string;
  subjectType: SubjectType;
  subjectId: string;
  subjectLabel?: string | undefined;
}

/** The current name of a subject the service keeps, or null for other types; throws NOT_FOUND. */
export async function subjectLabel(
  db: Queryable,
  viewer: { organizationId: string; userId: string },
  subjectType: SubjectType,
  subjectId: string,
): Promise<string | null> {
  switch (subjectType) {
    case 'rightsholder': {
      if (!isUuid(subjectId)) throw new AppError('RIGHTSHOLDER_NOT_FOUND');
      const access = await rightsholderAccess(db, viewer.organizationId, viewer.userId);
      return (await getRightsholder(db, access, subjectId)).name;
    }
    case 'lens':
      if (!isUuid(subjectId)) throw new AppError('LENS_NOT_FOUND');
      return (await getLens(db, viewer, subjectId)).name;
    default:
      return null;
  }
}

/**
 * The id as the service stores it: rightsholder and lens ids are uuids, which PostgreSQL accepts
 * in capitals but writes in small letters, and visits and events are keyed by that text.
 */
export function canonicalSubjectId(subjectType: SubjectType, subjectId: string): string {
  return (subjectType === 'rightsholder' || subjectType === 'lens') && isUuid(subjectId) ? subjectId.toLowerCase() : subjectId;
}

export async function trackVisit(db: Queryable, input: TrackVisitInput): Promise<Visit> {
  const subjectId = canonicalSubjectId(input.subjectType, input.subjectId);
  const label = await subjectLabel(db, input, input.subjectType, subjectId);
  return recordVisit(db, { ...input, subjectId, subjectLabel: label ?? input.subjectLabel ?? null });
}
