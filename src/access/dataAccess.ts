// Data-access roles: which rightsholders a member may see. Enforced wherever rightsholders,
// their statements or their analytics appear.
import type { Queryable } from '../db/pool.ts';

/** null: every rightsholder of the organization; otherwise exactly these ids. */
export type RightsholderScope = string[] | null;

export async function rightsholderScope(
  db: Queryable,
  organizationId: string,
  userId: string,
): Promise<RightsholderScope> {
  const { rows } = await db.query<{ mode: 'all' | 'restricted'; ids: string[] }>(
    'SELECT mode, rightsholder_ids AS ids FROM data_access_roles WHERE organization_id = $1 AND user_id = $2',
    [organizationId, userId],
  );
  return scopeOfRole(rows[0]?.mode ?? null, rows[0]?.ids ?? null);
}

/** A data-access role as a scope: no role, or mode `all`, sees every rightsholder. */
export function scopeOfRole(
  mode: 'all' | 'restricted' | null,
  ids: string[] | null,
): RightsholderScope {
  return mode === null || mode === 'all' ? null : (ids ?? []);
}

/**
 * The one SQL condition for "rows of a rightsholder the caller may see": `param` is a placeholder
 * (e.g. `$3`) bound to the caller's RightsholderScope (null: every rightsholder of the
 * organization). Procedures pass `ctx.org.rightsholderScope`, which the procedure middleware has
 * already loaded; they never read data_access_roles again.
 */
export function inRightsholderScope(column: string, param: string): string {
  return `(${param}::uuid[] IS NULL OR ${column} = ANY (${param}::uuid[]))`;
}

/**
 * The SQL condition for "rows about several rightsholders, every one of which the caller may see":
 * `column` is an array of rightsholder ids (an export's, an activity event's), `param` the scope's
 * placeholder as for inRightsholderScope. An empty array is within any scope.
 */
export function allInRightsholderScope(column: string, param: string): string {
  return `(${param}::uuid[] IS NULL OR ${column} <@ ${param}::uuid[])`;
}

/**
 * The SQL condition for "an upload the caller may see": every upload when the scope is null, else
 * one with a statement of a rightsholder in the scope. `upload` is the upload's id column, `param`
 * the scope's placeholder as for inRightsholderScope.
 */
export function uploadInRightsholderScope(upload: string, param: string): string {
  return `(${param}::uuid[] IS NULL OR EXISTS (SELECT 1 FROM statements s WHERE s.upload_id = ${upload} AND s.rightsholder_id = ANY (${param}::uuid[])))`;
}
