// Whether an export may still be built or completed: its organization and every rightsholder it
// names still there, and its requester still allowed to see them all (their restrictions then
// scope the rows written).
import { rightsholderScope } from '../access/dataAccess.ts';
import type { Restrictions } from '../analytics/compile.ts';
import type { Queryable } from '../db/pool.ts';
import type { Deps } from '../deps.ts';
import { AppError } from '../errors.ts';
import {
  liveRightsholderIds,
  organizationIsLive,
  requesterStanding,
  type ExportRow,
} from './store.ts';

/**
 * The export's organization must not be deleted: nothing is built or kept for a deleted one. With
 * `lock` (inside the completing transaction) the row is share-locked, so organization.delete,
 * which locks it for update, either committed before (the export fails) or waits for the commit.
 */
export async function organizationLive(db: Queryable, e: ExportRow, lock = false): Promise<void> {
  if (!(await organizationIsLive(db, e.organization_id, lock)))
    throw new AppError(
      'ORGANIZATION_NOT_FOUND',
      'The organization was deleted before the export was built',
    );
}

/**
 * Every rightsholder the export names must still be there (not deleted, not flagged deleted): an
 * export is never built without one of them. With `lock` (inside the completing transaction) the
 * rows are share-locked, so a deletion either committed before (the export fails) or waits.
 */
export async function rightsholdersLive(db: Queryable, e: ExportRow, lock = false): Promise<void> {
  const live = await liveRightsholderIds(db, e.organization_id, e.rightsholder_ids, lock);
  const gone = e.rightsholder_ids.filter((id) => !live.has(id));
  if (gone.length > 0) {
    throw new AppError(
      'RIGHTSHOLDER_NOT_FOUND',
      `The export names rightsholders deleted before it was built: ${gone.join(', ')}`,
      { details: { ids: gone } },
    );
  }
}

/**
 * The requester's restrictions now: they must still be an active member who sees every rightsholder
 * named, or a platform operator (who acts in every organization by their platform role, whatever
 * their membership there, a disabled one included, as the API lets them).
 */
export async function restrictionsOf(deps: Deps, e: ExportRow): Promise<Restrictions> {
  await organizationLive(deps.pool, e);
  await rightsholdersLive(deps.pool, e);
  const gone = () =>
    new AppError(
      'EXPORT_ACCESS_REVOKED',
      'The member who requested the export no longer has access to all of its rightsholders',
    );
  if (!e.requested_by) throw gone();
  const requester = await requesterStanding(deps.pool, e.organization_id, e.requested_by);
  if (requester?.status !== 'active' && !requester?.platform_role) throw gone();
  const scope = await rightsholderScope(deps.pool, e.organization_id, e.requested_by);
  if (scope !== null && !e.rightsholder_ids.every((id) => scope.includes(id))) throw gone();
  return { organizationId: e.organization_id, rightsholderIds: [...e.rightsholder_ids].sort() };
}
