// The caller's standing in an organization: role (a platform role counts in every organization)
// and data-access scope, read once per request where the credentials prefetched it. The procedure
// chain (src/trpc/procedure.ts) and the domain modules that re-check a role ask here.
import {
  standingColumns,
  standingJoins,
  type OrgStanding,
  type Principal,
} from '../auth/principal.ts';
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import { scopeOfRole } from './dataAccess.ts';
import { higherRole, platformRoleInOrg, type OrgRole } from './roles.ts';

/** The caller's standing in the organization the input names. */
export interface OrgAccess {
  id: string;
  name: string;
  role: OrgRole;
  /** the caller's data-access scope, read with the role: null for every rightsholder (src/access/dataAccess.ts) */
  rightsholderScope: string[] | null;
}

/** Loads the caller's role in an organization, or throws FORBIDDEN / NOT_FOUND. */
export async function organizationAccess(
  db: Queryable,
  principal: Principal,
  organizationId: string,
): Promise<OrgAccess> {
  const row = await standingIn(db, principal, organizationId);
  return accessFrom(row, principal);
}

/** The organization with the caller's membership and data-access role, read once per request where it was prefetched. */
async function standingIn(
  db: Queryable,
  principal: Principal,
  organizationId: string,
): Promise<OrgStanding | undefined> {
  const pre = principal.prefetchedOrg;
  // used once: a later call of the same batch reads again, after what the earlier one may have changed
  if (pre && !pre.used && pre.organizationId === organizationId.toLowerCase()) {
    pre.used = true;
    return pre.row ?? undefined;
  }
  const { rows } = await db.query<OrgStanding>(
    `SELECT ${standingColumns} FROM organizations o ${standingJoins('$2')} WHERE o.id = $1`,
    [organizationId, principal.userId],
  );
  return rows[0];
}

function accessFrom(row: OrgStanding | undefined, principal: Principal): OrgAccess {
  const platformRole = platformRoleInOrg(principal.platformRole);
  // Outsiders learn nothing about whether the organization exists.
  if (!row) {
    if (platformRole) throw new AppError('ORGANIZATION_NOT_FOUND');
    throw new AppError('NOT_ORGANIZATION_MEMBER');
  }
  if (row.role === null && !platformRole) throw new AppError('NOT_ORGANIZATION_MEMBER');
  if (row.deleted) throw new AppError('ORGANIZATION_NOT_FOUND');
  if (row.status === 'disabled' && !platformRole) throw new AppError('MEMBER_DISABLED');
  const role = higherRole(row.status === 'disabled' ? null : row.role, platformRole)!;
  return {
    id: row.id,
    name: row.name,
    role,
    rightsholderScope: scopeOfRole(row.scope_mode, row.scope_ids),
  };
}
