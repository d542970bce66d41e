// Distributors of an organization and the read-only shared library's (organization_id NULL),
// each with the mappings of it the organization sees. Every change writes its activity event in
// the same transaction: pass the transaction's client as `db`. Ids of another organization answer
// NOT_FOUND exactly like ids that do not exist.
import { recordActivity } from '../activity/record.ts';
import type { Principal } from '../auth/principal.ts';
import { isUniqueViolation } from '../db/errors.ts';
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import { mappingsOfDistributors, type Source } from './mappings.ts';
import { sortDirection } from '../db/sql.ts';

type Actor = Pick<Principal, 'userId' | 'apiKey'>;

export interface MappingSummary {
  id: string;
  name: string;
  source: Source;
  libraryKey: string | null;
  headerHash: string;
  revision: number;
  active: boolean;
}

export interface DistributorRecord {
  id: string;
  organizationId: string | null;
  source: Source;
  name: string;
  /** the mappings of this distributor the organization sees */
  mappings: MappingSummary[];
  createdAt: string;
  updatedAt: string;
}

interface DistributorRow {
  id: string;
  organization_id: string | null;
  name: string;
  created_at: Date;
  updated_at: Date;
}

export const distributorSorts = ['name', 'createdAt', 'updatedAt'] as const;
export type DistributorSort = (typeof distributorSorts)[number];
export const distributorSortOf = (sortBy: string | undefined): DistributorSort =>
  (distributorSorts as readonly string[]).includes(sortBy ?? '')
    ? (sortBy as DistributorSort)
    : 'name';
const DISTRIBUTOR_ORDER: Record<DistributorSort, string> = {
  name: 'lower(d.name)',
  createdAt: 'd.created_at',
  updatedAt: 'd.updated_at',
};

async function withMappings(
  db: Queryable,
  organizationId: string,
  rows: DistributorRow[],
): Promise<DistributorRecord[]> {
  const mappings = await mappingsOfDistributors(
    db,
    organizationId,
    rows.map((r) => r.id),
  );
  const byDistributor = new Map<string, MappingSummary[]>();
  for (const m of mappings) {
    const list = byDistributor.get(m.distributorId!) ?? [];
    list.push({
      id: m.id,
      name: m.name,
      source: m.source,
      libraryKey: m.libraryKey,
      headerHash: m.headerHash,
      revision: m.revision,
      active: m.active,
    });
    byDistributor.set(m.distributorId!, list);
  }
  return rows.map((r) => ({
    id: r.id,
    organizationId: r.organization_id,
    source: r.organization_id === null ? 'library' : 'organization',
    name: r.name,
    mappings: byDistributor.get(r.id) ?? [],
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  }));
}

export async function getDistributor(
  db: Queryable,
  organizationId: string,
  id: string,
  opts: { lock?: boolean } = {},
): Promise<DistributorRecord> {
  const { rows } = await db.query<DistributorRow>(
    `SELECT d.id, d.organization_id, d.name, d.created_at, d.updated_at FROM distributors d
     WHERE d.id = $2 AND (d.organization_id = $1 OR d.organization_id IS NULL)${opts.lock ? ' FOR UPDATE' : ''}`,
    [organizationId, id],
  );
  if (!rows[0]) throw new AppError('DISTRIBUTOR_NOT_FOUND');
  return (await withMappings(db, organizationId, rows))[0]!;
}

/** Which of these ids are distributors the organization sees (its own or the library's). */
export async function visibleDistributorIds(
  db: Queryable,
  organizationId: string,
  ids: readonly string[],
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT id::text FROM distributors WHERE (organization_id = $1 OR organization_id IS NULL) AND id = ANY ($2::uuid[])',
    [organizationId, ids],
  );
  return rows.map((r) => r.id);
}

export async function listDistributors(
  db: Queryable,
  organizationId: string,
  opts: {
    source?: Source | undefined;
    search?: string | undefined;
    sortBy: DistributorSort;
    sortOrder: 'asc' | 'desc';
    limit: number;
    offset: number;
  },
): Promise<{ rows: DistributorRecord[]; total: number }> {
  const params: unknown[] = [organizationId];
  const where = ['(d.organization_id = $1 OR d.organization_id IS NULL)'];
  if (opts.source === 'organization') where.push('d.organization_id IS NOT NULL');
  if (opts.source === 'library') where.push('d.organization_id IS NULL');
  if (opts.search) {
    params.push(opts.search);
    where.push(`position(lower($${params.length}) in lower(d.name)) > 0`);
  }
  const direction = sortDirection(opts.sortOrder);
  const countParams = [...params];
  params.push(opts.limit, opts.offset);
  const { rows } = await db.query<DistributorRow & { total: number }>(
    `SELECT d.id, d.organization_id, d.name, d.created_at, d.updated_at, count(*) OVER () AS total
     FROM distributors d WHERE ${where.join(' AND ')}
     ORDER BY ${DISTRIBUTOR_ORDER[opts.sortBy]} ${direction}, d.id ${direction}
     LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && opts.offset > 0) {
    total = (
      await db.query<{ n: number }>(
        `SELECT count(*) AS n FROM distributors d WHERE ${where.join(' AND ')}`,
        countParams,
      )
    ).rows[0]!.n;
  }
  return { rows: await withMappings(db, organizationId, rows), total };
}

function assertDistributorChangeable(distributor: DistributorRecord): void {
  if (distributor.source === 'library') throw new AppError('LIBRARY_DISTRIBUTOR_READ_ONLY');
}

// Distributors are not an activity subject type: their changes are recorded on the organization.
export async function createDistributor(
  db: Queryable,
  actor: Actor,
  organizationId: string,
  name: string,
): Promise<DistributorRecord> {
  let id: string;
  try {
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO distributors (organization_id, name) VALUES ($1, $2) RETURNING id`,
      [organizationId, name],
    );
    id = rows[0]!.id;
  } catch (error) {
    if (isUniqueViolation(error, 'distributors_org_name_key'))
      throw new AppError('DISTRIBUTOR_NAME_TAKEN');
    throw error;
  }
  await recordActivity(db, actor, {
    organizationId,
    action: 'distributor.create',
    subjectType: 'organization',
    subjectId: organizationId,
    subjectLabel: name,
    changes: { distributor: { before: null, after: { id, name } } },
  });
  return getDistributor(db, organizationId, id);
}

export async function updateDistributor(
  db: Queryable,
  actor: Actor,
  organizationId: string,
  id: string,
  patch: { name?: string | undefined },
): Promise<DistributorRecord> {
  const current = await getDistributor(db, organizationId, id, { lock: true });
  assertDistributorChangeable(current);
  if (patch.name === undefined || patch.name === current.name) return current;
  try {
    await db.query(
      `UPDATE distributors SET name = $2, updated_at = clock_timestamp() WHERE id = $1`,
      [id, patch.name],
    );
  } catch (error) {
    if (isUniqueViolation(error, 'distributors_org_name_key'))
      throw new AppError('DISTRIBUTOR_NAME_TAKEN');
    throw error;
  }
  await recordActivity(db, actor, {
    organizationId,
    action: 'distributor.updateById',
    subjectType: 'organization',
    subjectId: organizationId,
    subjectLabel: patch.name,
    changes: { distributorName: { before: current.name, after: patch.name } },
  });
  return getDistributor(db, organizationId, id);
}

/** Refuses while mappings or statements of the organization still name the distributor. */
export async function deleteDistributor(
  db: Queryable,
  actor: Actor,
  organizationId: string,
  id: string,
): Promise<{ id: string; deleted: true }> {
  const current = await getDistributor(db, organizationId, id, { lock: true });
  assertDistributorChangeable(current);
  const { rows } = await db.query<{ mappings: number; statements: number }>(
    `SELECT (SELECT count(*) FROM mappings WHERE distributor_id = $1) AS mappings,
            (SELECT count(*) FROM statements WHERE distributor_id = $1) AS statements`,
    [id],
  );
  const usage = rows[0]!;
  if (usage.mappings > 0 || usage.statements > 0) {
    throw new AppError(
      'DISTRIBUTOR_IN_USE',
      `${usage.mappings} mapping(s) and ${usage.statements} statement(s) use the distributor`,
      {
        details: { mappings: usage.mappings, statements: usage.statements },
      },
    );
  }
  await db.query('DELETE FROM distributors WHERE id = $1 AND organization_id = $2', [
    id,
    organizationId,
  ]);
  await recordActivity(db, actor, {
    organizationId,
    action: 'distributor.deleteById',
    subjectType: 'organization',
    subjectId: organizationId,
    subjectLabel: current.name,
    changes: { distributor: { before: { id, name: current.name }, after: null } },
  });
  return { id, deleted: true };
}
