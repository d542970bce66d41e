// The changes to rightsholders, each with its activity event in the same transaction: pass the
// transaction's client as `db`.
import type { RightsholderScope } from '../access/dataAccess.ts';
import { diffFields, recordActivity } from '../activity/record.ts';
import type { Principal } from '../auth/principal.ts';
import type { Queryable } from '../db/pool.ts';
import { countDependents, removeDependents, type DependentCounts } from './dependents.ts';
import {
  changeableFields,
  createRightsholder,
  deleteRightsholder,
  fieldsOf,
  getRightsholder,
  updateRightsholder,
  type Rightsholder,
  type RightsholderAccess,
  type RightsholderFields,
} from './store.ts';

type Actor = Pick<Principal, 'userId' | 'apiKey'>;

/** The caller's reach: `org.rightsholderScope` is the scope the procedure middleware loaded with the role. */
export function rightsholderAccess(
  org: { id: string; rightsholderScope: RightsholderScope },
  userId: string,
): RightsholderAccess {
  return { organizationId: org.id, userId, scope: org.rightsholderScope };
}

export async function create(
  db: Queryable,
  actor: Actor,
  organizationId: string,
  fields: Omit<RightsholderFields, 'isDeleted'>,
): Promise<Rightsholder> {
  const created = await createRightsholder(db, organizationId, actor.userId, fields);
  await recordActivity(db, actor, {
    organizationId,
    action: 'rightsholder.create',
    subjectType: 'rightsholder',
    subjectId: created.id,
    subjectLabel: created.name,
  });
  return created;
}

/** Applies the given fields (undefined: unchanged); a change of nothing writes nothing. */
export async function update(
  db: Queryable,
  actor: Actor,
  current: Rightsholder,
  patch: Partial<RightsholderFields>,
  action: string,
): Promise<Rightsholder> {
  const before = fieldsOf(current);
  const after: RightsholderFields = { ...before };
  for (const field of changeableFields) {
    if (patch[field] !== undefined) (after as Record<string, unknown>)[field] = patch[field];
  }
  const changes = diffFields(before, after, changeableFields);
  if (!changes) return current;
  const updated = await updateRightsholder(db, current, after, actor.userId);
  await recordActivity(db, actor, {
    organizationId: current.organizationId,
    action,
    subjectType: 'rightsholder',
    subjectId: current.id,
    subjectLabel: updated.name,
    changes,
  });
  return updated;
}

export interface DeleteOutcome {
  id: string;
  name: string;
  dryRun: boolean;
  /** rows stored under the rightsholder: removed, or that would be in a dry run */
  removed: DependentCounts;
}

/**
 * Removes the rightsholder and everything stored under it, its own history included; the
 * removal itself is then recorded, so the feed keeps who removed what. A dry run changes nothing.
 */
export async function remove(
  db: Queryable,
  actor: Actor,
  access: RightsholderAccess,
  requested: string,
  dryRun: boolean,
): Promise<DeleteOutcome> {
  const current = await getRightsholder(db, access, requested, { lock: true });
  // the id as stored (lower case), whatever case it was sent in: events and visits are keyed by its text
  const id = current.id;
  if (dryRun)
    return {
      id,
      name: current.name,
      dryRun,
      removed: await countDependents(db, access.organizationId, id),
    };
  const removed = await removeDependents(db, access.organizationId, id);
  await deleteRightsholder(db, access.organizationId, id);
  await recordActivity(db, actor, {
    organizationId: access.organizationId,
    action: 'rightsholder.deleteById',
    subjectType: 'rightsholder',
    subjectId: id,
    subjectLabel: current.name,
    rightsholderIds: [id],
  });
  return { id, name: current.name, dryRun, removed };
}
