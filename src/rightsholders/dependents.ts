// Everything stored under a rightsholder, which rightsholder.deleteById removes with it and its
// dry run counts. A table that refers to rightsholders belongs in this list; a test checks that
// every foreign key to rightsholders is here, so a new one cannot be forgotten.
import type { Queryable } from '../db/pool.ts';

interface Dependent {
  /** the name in deleteById's `removed` counts */
  key: string;
  table: string;
  /** the rows of the rightsholder: $1 is the organization id, $2 the rightsholder id */
  match: string;
}

export const dependents: readonly Dependent[] = [
  {
    key: 'activityEvents',
    table: 'activity_events',
    match: "organization_id = $1 AND subject_type = 'rightsholder' AND subject_id = $2::uuid::text",
  },
  {
    key: 'visits',
    table: 'subject_visits',
    match: "organization_id = $1 AND subject_type = 'rightsholder' AND subject_id = $2::uuid::text",
  },
  {
    key: 'mdPriorities',
    table: 'rightsholder_md_priorities',
    match: 'organization_id = $1 AND rightsholder_id = $2::uuid',
  },
  // their flags and other rows go with them by foreign key
  {
    key: 'statements',
    table: 'statements',
    match: 'organization_id = $1 AND rightsholder_id = $2::uuid',
  },
  // the catalog: rules scoped to the rightsholder or to its block, its musical details, then the
  // block itself (clusters, products and overrides go with it by foreign key)
  {
    key: 'catalogRules',
    table: 'catalog_rules',
    match:
      'organization_id = $1 AND (rightsholder_id = $2::uuid OR block_id IN (SELECT id FROM catalog_blocks WHERE rightsholder_id = $2::uuid))',
  },
  {
    key: 'musicalDetails',
    table: 'musical_details',
    match:
      'organization_id = $1 AND block_id IN (SELECT id FROM catalog_blocks WHERE rightsholder_id = $2::uuid)',
  },
  {
    key: 'catalogBlocks',
    table: 'catalog_blocks',
    match: 'organization_id = $1 AND rightsholder_id = $2::uuid',
  },
];

/** Data-access roles name rightsholders in an array; the id is taken out of them, the roles stay. */
const ROLE_MATCH = 'organization_id = $1 AND $2::uuid = ANY(rightsholder_ids)';

export type DependentCounts = Record<string, number>;

export async function countDependents(
  db: Queryable,
  organizationId: string,
  rightsholderId: string,
): Promise<DependentCounts> {
  const counts: DependentCounts = {};
  for (const d of dependents) {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*) AS n FROM ${d.table} WHERE ${d.match}`,
      [organizationId, rightsholderId],
    );
    counts[d.key] = rows[0]!.n;
  }
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*) AS n FROM data_access_roles WHERE ${ROLE_MATCH}`,
    [organizationId, rightsholderId],
  );
  counts.dataAccessRoleEntries = rows[0]!.n;
  return counts;
}

export async function removeDependents(
  db: Queryable,
  organizationId: string,
  rightsholderId: string,
): Promise<DependentCounts> {
  const counts: DependentCounts = {};
  for (const d of dependents) {
    const { rowCount } = await db.query(`DELETE FROM ${d.table} WHERE ${d.match}`, [
      organizationId,
      rightsholderId,
    ]);
    counts[d.key] = rowCount ?? 0;
  }
  const { rowCount } = await db.query(
    `UPDATE data_access_roles SET rightsholder_ids = array_remove(rightsholder_ids, $2::uuid), updated_at = now() WHERE ${ROLE_MATCH}`,
    [organizationId, rightsholderId],
  );
  counts.dataAccessRoleEntries = rowCount ?? 0;
  return counts;
}

/**
 * The ids of the rightsholder's statements, locked in id order for the rest of the transaction:
 * their files are listed while no variant can be recorded for them.
 */
export async function lockStatementIdsOfRightsholder(
  db: Queryable,
  organizationId: string,
  rightsholderId: string,
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM statements WHERE organization_id = $1 AND rightsholder_id = $2 ORDER BY id FOR UPDATE',
    [organizationId, rightsholderId],
  );
  return rows.map((r) => r.id);
}
