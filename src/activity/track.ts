// activity.trackVisit and its deprecated alias rightsholder.trackOpen. A visit to a subject the
// service keeps (a rightsholder, a lens, a file, an upload, an export, a mapping, the
// organization, a member) needs the subject to exist in the caller's organization and be visible
// to the caller, and is labelled with its current name where it has one; visits to products and
// chats are recorded as given (a product's events may name a musical detail's id).
import type { Queryable } from '../db/pool.ts';
import {
  inRightsholderScope,
  uploadInRightsholderScope,
  type RightsholderScope,
} from '../access/dataAccess.ts';
import { AppError } from '../errors.ts';
import { visibleExport } from '../exports/store.ts';
import { getMapping } from '../ingest/mappings.ts';
import { getLens } from '../lenses/store.ts';
import { getMember } from '../organizations/members.ts';
import { getOrganization } from '../organizations/organizations.ts';
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
  /** the caller's data-access scope, as the procedure middleware loaded it */
  rightsholderScope: RightsholderScope;
}

/**
 * A subject the service keeps, checked: its current name (a member's e-mail address; null for an
 * upload or an export, which have none), or undefined for the types it does not check; throws
 * the kind's NOT_FOUND when the subject is not in the organization or not visible to the viewer
 * (a member restricted by a data-access role sees a file, upload or export only through its
 * rightsholders).
 */
export async function subjectLabel(
  db: Queryable,
  viewer: { organizationId: string; userId: string; rightsholderScope: RightsholderScope },
  subjectType: SubjectType,
  subjectId: string,
): Promise<string | null | undefined> {
  switch (subjectType) {
    case 'rightsholder': {
      if (!isUuid(subjectId)) throw new AppError('RIGHTSHOLDER_NOT_FOUND');
      const access = {
        organizationId: viewer.organizationId,
        userId: viewer.userId,
        scope: viewer.rightsholderScope,
      };
      return (await getRightsholder(db, access, subjectId)).name;
    }
    case 'lens':
      if (!isUuid(subjectId)) throw new AppError('LENS_NOT_FOUND');
      return (await getLens(db, viewer, subjectId)).name;
    case 'file': {
      if (!isUuid(subjectId)) throw new AppError('STATEMENT_NOT_FOUND');
      const { rows } = await db.query<{ name: string }>(
        `SELECT coalesce(custom_name, file_name) AS name FROM statements
         WHERE organization_id = $1 AND id = $2 AND ${inRightsholderScope('rightsholder_id', '$3')}`,
        [viewer.organizationId, subjectId, viewer.rightsholderScope],
      );
      if (!rows[0]) throw new AppError('STATEMENT_NOT_FOUND');
      return rows[0].name;
    }
    case 'upload': {
      if (!isUuid(subjectId)) throw new AppError('UPLOAD_NOT_FOUND');
      // a restricted member sees an upload through a statement of it they may see
      const { rowCount } = await db.query(
        `SELECT 1 FROM uploads u WHERE u.organization_id = $1 AND u.id = $2
           AND ${uploadInRightsholderScope('u.id', '$3')}`,
        [viewer.organizationId, subjectId, viewer.rightsholderScope],
      );
      if (!rowCount) throw new AppError('UPLOAD_NOT_FOUND');
      return null;
    }
    case 'export':
      if (!isUuid(subjectId)) throw new AppError('EXPORT_NOT_FOUND');
      await visibleExport(db, viewer.organizationId, viewer.rightsholderScope, subjectId);
      return null;
    case 'mapping':
      if (!isUuid(subjectId)) throw new AppError('MAPPING_NOT_FOUND');
      return (await getMapping(db, viewer.organizationId, subjectId)).name;
    case 'organization': {
      // the caller's own organization only: another one's id is as unknown as none
      if (!isUuid(subjectId) || subjectId.toLowerCase() !== viewer.organizationId.toLowerCase())
        throw new AppError('ORGANIZATION_NOT_FOUND');
      return (await getOrganization(db, viewer.organizationId)).name;
    }
    case 'user':
      if (!isUuid(subjectId)) throw new AppError('USER_NOT_FOUND');
      return (await getMember(db, viewer.organizationId, subjectId)).email;
    default:
      return undefined;
  }
}

/**
 * The id as the service stores it: a uuid, of a subject of any type, is written in small letters
 * (PostgreSQL accepts it in capitals but writes it so, and events and visits are keyed by that
 * text), so an id in capitals names the same subject; any other id is taken as given.
 */
export function canonicalSubjectId(subjectId: string): string {
  return isUuid(subjectId) ? subjectId.toLowerCase() : subjectId;
}

export async function trackVisit(db: Queryable, input: TrackVisitInput): Promise<Visit> {
  const subjectId = canonicalSubjectId(input.subjectId);
  const label = await subjectLabel(db, input, input.subjectType, subjectId);
  return recordVisit(db, {
    ...input,
    subjectId,
    subjectLabel: label ?? input.subjectLabel ?? null,
  });
}
