// Mappings of an organization, and the read-only shared library (rows with organization_id NULL)
// that every organization sees; their revisions and which statements a change would redrive. One
// small function per operation; every change writes its activity event in the same transaction:
// pass the transaction's client as `db`. The distributors the mappings name: distributors.ts.
//
// Visibility: an organization sees its own mappings and the library's. Ids of another
// organization answer NOT_FOUND exactly like ids that do not exist.
import { computeHeaderHash } from './headerHash.ts';
import { inRightsholderScope, type RightsholderScope } from '../access/dataAccess.ts';
import { recordActivity, type FieldChanges } from '../activity/record.ts';
import type { Principal } from '../auth/principal.ts';
import { isUniqueViolation } from '../db/errors.ts';
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import {
  headerKey,
  formulaProblem,
  missingRequiredFields,
  standardFields,
  type MappingFields,
  type StandardField,
} from './mappingFields.ts';
import { sortDirection } from '../db/sql.ts';

type Actor = Pick<Principal, 'userId' | 'apiKey'>;

export type Source = 'organization' | 'library';

export interface MappingRecord {
  id: string;
  organizationId: string | null;
  /** 'library': ships with the service, read-only; 'organization': the organization's own */
  source: Source;
  libraryKey: string | null;
  distributorId: string | null;
  distributorName: string | null;
  name: string;
  headers: string[];
  headerHash: string;
  fields: MappingFields;
  fileCategories: unknown;
  revision: number;
  /** whether the organization's statements with this header hash use it (its own mapping shadows the library's) */
  active: boolean;
  createdById: string | null;
  createdAt: string;
  updatedAt: string;
}

interface MappingRow {
  id: string;
  organization_id: string | null;
  library_key: string | null;
  distributor_id: string | null;
  distributor_name: string | null;
  name: string;
  headers: string[];
  header_hash: string;
  fields: MappingFields;
  file_categories: unknown;
  revision: number;
  active: boolean;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The columns of a MappingRecord from `mappings m`; `$1` must be the viewing organization. */
const MAPPING_COLUMNS = `m.id, m.organization_id, m.library_key, m.distributor_id, d.name AS distributor_name, m.name, m.headers,
  m.header_hash, m.fields, m.file_categories, m.revision, m.created_by, m.created_at, m.updated_at,
  (m.organization_id IS NOT NULL OR NOT EXISTS (
    SELECT 1 FROM mappings o WHERE o.organization_id = $1 AND o.header_hash = m.header_hash)) AS active`;
const MAPPING_FROM = `mappings m LEFT JOIN distributors d ON d.id = m.distributor_id`;
const VISIBLE = `(m.organization_id = $1 OR m.organization_id IS NULL)`;

function toMapping(row: MappingRow): MappingRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    source: row.organization_id === null ? 'library' : 'organization',
    libraryKey: row.library_key,
    distributorId: row.distributor_id,
    distributorName: row.distributor_name,
    name: row.name,
    headers: row.headers,
    headerHash: row.header_hash,
    fields: row.fields,
    fileCategories: row.file_categories,
    revision: row.revision,
    active: row.active,
    createdById: row.created_by,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** JSON with object keys sorted: jsonb returns keys in its own order, so equal values must compare by this. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** Field-level before/after of the given keys whose values differ (compared canonically). */
function changesOf<T extends Record<string, unknown>>(
  before: T,
  after: T,
  keys: readonly (keyof T & string)[],
): FieldChanges | null {
  const changes: FieldChanges = {};
  for (const key of keys) {
    if (canonicalJson(before[key]) !== canonicalJson(after[key]))
      changes[key] = { before: before[key] ?? null, after: after[key] ?? null };
  }
  return Object.keys(changes).length > 0 ? changes : null;
}

// ---------------------------------------------------------------------------------------------
// Checking a mapping against its headers

export interface MappingProblem {
  path: string;
  message: string;
  kind: 'unknown_column' | 'missing_required' | 'no_headers' | 'bad_formula';
}

/**
 * Everything wrong with a mapping's fields for its headers, each with its path: columns the
 * headers lack (compared as header cells are: trimmed, case- and white-space-insensitively) and,
 * with requireComplete, the required fields it does not give.
 */
export function mappingProblems(
  headers: readonly string[],
  fields: MappingFields,
  opts: { requireComplete: boolean },
): MappingProblem[] {
  const problems: MappingProblem[] = [];
  if (!headers.some((h) => h.trim() !== ''))
    problems.push({
      path: 'headers',
      message: 'must have at least one non-empty header cell',
      kind: 'no_headers',
    });
  const known = new Set(headers.map(headerKey));
  for (const field of standardFields) {
    const spec = fields[field];
    if (!spec) continue;
    if (spec.column !== undefined && !known.has(headerKey(spec.column))) {
      problems.push({
        path: `fields.${field}.column`,
        message: `column "${spec.column}" is not among the headers`,
        kind: 'unknown_column',
      });
    }
    for (const key of ['columns', 'multiply'] as const) {
      (spec[key] ?? []).forEach((column, i) => {
        if (!known.has(headerKey(column))) {
          problems.push({
            path: `fields.${field}.${key}.${i}`,
            message: `column "${column}" is not among the headers`,
            kind: 'unknown_column',
          });
        }
      });
    }
    const formula = formulaProblem(field, spec);
    if (formula !== null)
      problems.push({ path: `fields.${field}.multiply`, message: formula, kind: 'bad_formula' });
  }
  if (opts.requireComplete) {
    for (const field of missingRequiredFields(fields))
      problems.push({ path: `fields.${field}`, message: 'is required', kind: 'missing_required' });
  }
  return problems;
}

/** Throws BAD_REQUEST naming every problem of the mapping, or returns. */
export function assertValidMapping(headers: readonly string[], fields: MappingFields): void {
  const problems = mappingProblems(headers, fields, { requireComplete: true });
  const describe = (ps: MappingProblem[]) => ps.map((p) => ({ path: p.path, message: p.message }));
  const formulas = problems.filter((p) => p.kind === 'bad_formula');
  if (formulas.length > 0) {
    throw new AppError(
      'MAPPING_FORMULA_INVALID',
      formulas.map((p) => `${p.path}: ${p.message}`).join('; '),
      { details: { fields: describe(formulas) } },
    );
  }
  const columnProblems = problems.filter(
    (p) => p.kind === 'unknown_column' || p.kind === 'no_headers',
  );
  if (columnProblems.length > 0) {
    throw new AppError(
      'MAPPING_COLUMN_UNKNOWN',
      columnProblems.map((p) => `${p.path}: ${p.message}`).join('; '),
      {
        details: { fields: describe(columnProblems) },
      },
    );
  }
  const missing = problems.filter((p) => p.kind === 'missing_required');
  if (missing.length > 0) {
    throw new AppError(
      'MAPPING_REQUIRED_FIELDS_MISSING',
      `The mapping must give ${missing.map((p) => p.path).join(', ')}`,
      {
        details: { fields: describe(missing) },
      },
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Reading mappings

export async function getMapping(
  db: Queryable,
  organizationId: string,
  id: string,
  opts: { lock?: boolean } = {},
): Promise<MappingRecord> {
  const { rows } = await db.query<MappingRow>(
    `SELECT ${MAPPING_COLUMNS} FROM ${MAPPING_FROM} WHERE ${VISIBLE} AND m.id = $2${opts.lock ? ' FOR UPDATE OF m' : ''}`,
    [organizationId, id],
  );
  if (!rows[0]) throw new AppError('MAPPING_NOT_FOUND');
  return toMapping(rows[0]);
}

/** The mapping statements with this header hash use: the organization's own, else the library's. */
export async function findMappingByHeaderHash(
  db: Queryable,
  organizationId: string,
  headerHash: string,
): Promise<MappingRecord | null> {
  const { rows } = await db.query<MappingRow>(
    `SELECT ${MAPPING_COLUMNS} FROM ${MAPPING_FROM} WHERE ${VISIBLE} AND m.header_hash = $2
     ORDER BY m.organization_id NULLS LAST, m.updated_at DESC LIMIT 1`,
    [organizationId, headerHash],
  );
  return rows[0] ? toMapping(rows[0]) : null;
}

/**
 * Every mapping that may match a statement of the organization by its columns (library.ts,
 * findMappingForHeader): the organization's own, then the library's; each tier by name.
 */
export async function mappingsToMatch(
  db: Queryable,
  organizationId: string,
): Promise<(MappingRecord & { aliases: Record<string, string[]> })[]> {
  const { rows } = await db.query<MappingRow & { aliases: Record<string, string[]> }>(
    `SELECT ${MAPPING_COLUMNS}, m.aliases FROM ${MAPPING_FROM} WHERE ${VISIBLE}
     ORDER BY m.organization_id NULLS LAST, m.name, m.id`,
    [organizationId],
  );
  // the library's other names for a mapping's columns (library.ts); an organization's mappings have none
  return rows.map((row) => ({ ...toMapping(row), aliases: row.aliases }));
}

/** The mappings the organization sees of these distributors: its own first, then the library's, each by name. */
export async function mappingsOfDistributors(
  db: Queryable,
  organizationId: string,
  distributorIds: readonly string[],
): Promise<MappingRecord[]> {
  const { rows } = await db.query<MappingRow>(
    `SELECT ${MAPPING_COLUMNS} FROM ${MAPPING_FROM} WHERE ${VISIBLE} AND m.distributor_id = ANY($2::uuid[])
     ORDER BY m.organization_id NULLS LAST, lower(m.name), m.id`,
    [organizationId, distributorIds],
  );
  return rows.map(toMapping);
}

export const mappingSorts = ['name', 'createdAt', 'updatedAt', 'revision'] as const;
export type MappingSort = (typeof mappingSorts)[number];
/** A sortBy the input schema admitted, typed (the type system loses it through paginationSchema). */
export const mappingSortOf = (sortBy: string | undefined): MappingSort =>
  (mappingSorts as readonly string[]).includes(sortBy ?? '') ? (sortBy as MappingSort) : 'name';
const MAPPING_ORDER: Record<MappingSort, string> = {
  name: 'lower(m.name)',
  createdAt: 'm.created_at',
  updatedAt: 'm.updated_at',
  revision: 'm.revision',
};

export interface MappingListOptions {
  ids?: string[] | undefined;
  source?: Source | undefined;
  distributorId?: string | undefined;
  search?: string | undefined;
  sortBy: MappingSort;
  sortOrder: 'asc' | 'desc';
  limit: number;
  offset: number;
}

export async function listMappings(
  db: Queryable,
  organizationId: string,
  opts: MappingListOptions,
): Promise<{ rows: MappingRecord[]; total: number }> {
  const params: unknown[] = [organizationId];
  const where = [VISIBLE];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (opts.ids !== undefined) where.push(`m.id = ANY(${param(opts.ids)}::uuid[])`);
  if (opts.source === 'organization') where.push('m.organization_id IS NOT NULL');
  if (opts.source === 'library') where.push('m.organization_id IS NULL');
  if (opts.distributorId !== undefined)
    where.push(`m.distributor_id = ${param(opts.distributorId)}`);
  // position() rather than LIKE: the search text needs no escaping of % and _
  if (opts.search) where.push(`position(lower(${param(opts.search)}) in lower(m.name)) > 0`);
  const direction = sortDirection(opts.sortOrder);
  const { rows } = await db.query<MappingRow & { total: number }>(
    `SELECT ${MAPPING_COLUMNS}, count(*) OVER () AS total FROM ${MAPPING_FROM}
     WHERE ${where.join(' AND ')}
     ORDER BY ${MAPPING_ORDER[opts.sortBy]} ${direction}, m.id ${direction}
     LIMIT ${param(opts.limit)} OFFSET ${param(opts.offset)}`,
    params,
  );
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && opts.offset > 0) {
    const counted = await db.query<{ n: number }>(
      `SELECT count(*) AS n FROM ${MAPPING_FROM} WHERE ${where.join(' AND ')}`,
      params.slice(0, -2),
    );
    total = counted.rows[0]!.n;
  }
  return { rows: rows.map(toMapping), total };
}

// ---------------------------------------------------------------------------------------------
// Changing mappings

export interface MappingInput {
  name: string;
  headers: string[];
  fields: MappingFields;
  distributorId: string | null;
  fileCategories: unknown;
}

const changeable = [
  'name',
  'headers',
  'headerHash',
  'fields',
  'distributorId',
  'fileCategories',
] as const;

/** A distributor the organization may attach a mapping to: its own or the library's. */
async function assertDistributorVisible(
  db: Queryable,
  organizationId: string,
  distributorId: string | null,
): Promise<void> {
  if (distributorId === null) return;
  const { rowCount } = await db.query(
    `SELECT 1 FROM distributors WHERE id = $2 AND (organization_id = $1 OR organization_id IS NULL)`,
    [organizationId, distributorId],
  );
  if (!rowCount) throw new AppError('DISTRIBUTOR_NOT_FOUND');
}

async function writeRevision(
  db: Queryable,
  mappingId: string,
  userId: string | null,
): Promise<void> {
  await db.query(
    `INSERT INTO mapping_revisions (mapping_id, revision, name, headers, header_hash, fields, file_categories, distributor_id, changed_by)
     SELECT id, revision, name, headers, header_hash, fields, file_categories, distributor_id, $2 FROM mappings WHERE id = $1`,
    [mappingId, userId],
  );
}

/** Refuses a header hash another mapping of the organization has (the unique index catches a race). */
async function assertHeaderHashFree(
  db: Queryable,
  organizationId: string,
  headerHash: string,
  exceptId: string | null,
): Promise<void> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM mappings WHERE organization_id = $1 AND header_hash = $2 AND id IS DISTINCT FROM $3`,
    [organizationId, headerHash, exceptId],
  );
  if (rows[0])
    throw new AppError('MAPPING_HEADER_HASH_TAKEN', undefined, {
      details: { mappingId: rows[0].id },
    });
}

export async function createMapping(
  db: Queryable,
  actor: Actor,
  organizationId: string,
  input: MappingInput,
): Promise<MappingRecord> {
  assertValidMapping(input.headers, input.fields);
  await assertDistributorVisible(db, organizationId, input.distributorId);
  const headerHash = computeHeaderHash(input.headers);
  await assertHeaderHashFree(db, organizationId, headerHash, null);
  let id: string;
  try {
    const { rows } = await db.query<{ id: string }>(
      `INSERT INTO mappings (organization_id, distributor_id, name, headers, header_hash, fields, file_categories, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
      [
        organizationId,
        input.distributorId,
        input.name,
        input.headers,
        headerHash,
        JSON.stringify(input.fields),
        input.fileCategories === undefined || input.fileCategories === null
          ? null
          : JSON.stringify(input.fileCategories),
        actor.userId,
      ],
    );
    id = rows[0]!.id;
  } catch (error) {
    if (isUniqueViolation(error, 'mappings_org_hash_key'))
      throw new AppError('MAPPING_HEADER_HASH_TAKEN', undefined, { cause: error });
    throw error;
  }
  await writeRevision(db, id, actor.userId);
  const created = await getMapping(db, organizationId, id);
  await recordActivity(db, actor, {
    organizationId,
    action: 'mapping.create',
    subjectType: 'mapping',
    subjectId: id,
    subjectLabel: created.name || null,
  });
  return created;
}

export interface MappingPatch {
  name?: string | undefined;
  headers?: string[] | undefined;
  fields?: MappingFields | undefined;
  distributorId?: string | null | undefined;
  fileCategories?: unknown;
}

/** The mapping as a patch would leave it (undefined: unchanged), not yet written. */
export function patchedMapping(current: MappingRecord, patch: MappingPatch): MappingRecord {
  const headers = patch.headers ?? current.headers;
  return {
    ...current,
    name: patch.name ?? current.name,
    headers,
    headerHash: patch.headers ? computeHeaderHash(headers) : current.headerHash,
    fields: patch.fields ?? current.fields,
    distributorId: patch.distributorId === undefined ? current.distributorId : patch.distributorId,
    fileCategories:
      patch.fileCategories === undefined ? current.fileCategories : patch.fileCategories,
  };
}

export function assertChangeable(mapping: MappingRecord): void {
  if (mapping.source === 'library') {
    throw new AppError('LIBRARY_MAPPING_READ_ONLY', undefined, {
      details: { libraryKey: mapping.libraryKey, headerHash: mapping.headerHash },
    });
  }
}

/**
 * Applies a patch to a mapping locked by the caller: every change is a new revision, kept in
 * mapping_revisions; a patch that changes nothing writes nothing.
 */
export async function updateMapping(
  db: Queryable,
  actor: Actor,
  organizationId: string,
  current: MappingRecord,
  patch: MappingPatch,
  action: string,
): Promise<{ mapping: MappingRecord; changed: boolean }> {
  assertChangeable(current);
  const after = patchedMapping(current, patch);
  assertValidMapping(after.headers, after.fields);
  const changes = changesOf(
    current as unknown as Record<string, unknown>,
    after as unknown as Record<string, unknown>,
    changeable,
  );
  if (!changes) return { mapping: current, changed: false };
  if (changes.distributorId)
    await assertDistributorVisible(db, organizationId, after.distributorId);
  if (changes.headerHash)
    await assertHeaderHashFree(db, organizationId, after.headerHash, current.id);
  try {
    await db.query(
      `UPDATE mappings SET name = $2, headers = $3, header_hash = $4, fields = $5, distributor_id = $6, file_categories = $7,
         revision = revision + 1, updated_at = clock_timestamp()
       WHERE id = $1`,
      [
        current.id,
        after.name,
        after.headers,
        after.headerHash,
        JSON.stringify(after.fields),
        after.distributorId,
        after.fileCategories === undefined || after.fileCategories === null
          ? null
          : JSON.stringify(after.fileCategories),
      ],
    );
  } catch (error) {
    if (isUniqueViolation(error, 'mappings_org_hash_key'))
      throw new AppError('MAPPING_HEADER_HASH_TAKEN', undefined, { cause: error });
    throw error;
  }
  await writeRevision(db, current.id, actor.userId);
  const updated = await getMapping(db, organizationId, current.id);
  await recordActivity(db, actor, {
    organizationId,
    action,
    subjectType: 'mapping',
    subjectId: current.id,
    subjectLabel: updated.name || null,
    changes,
  });
  return { mapping: updated, changed: true };
}

export interface MappingDeleteOutcome {
  id: string;
  deleted: true;
  /** statements processed with it: they keep their rows and revision number */
  statementsProcessed: number;
}

export async function deleteMapping(
  db: Queryable,
  actor: Actor,
  organizationId: string,
  id: string,
): Promise<MappingDeleteOutcome> {
  const current = await getMapping(db, organizationId, id, { lock: true });
  assertChangeable(current);
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*) AS n FROM statements WHERE organization_id = $1 AND mapping_id = $2`,
    [organizationId, id],
  );
  await db.query('DELETE FROM mappings WHERE id = $1 AND organization_id = $2', [
    id,
    organizationId,
  ]);
  await recordActivity(db, actor, {
    organizationId,
    action: 'mapping.deleteById',
    subjectType: 'mapping',
    subjectId: id,
    subjectLabel: current.name || null,
  });
  return { id, deleted: true, statementsProcessed: rows[0]!.n };
}

// ---------------------------------------------------------------------------------------------
// Revisions

export interface MappingRevision {
  mappingId: string;
  revision: number;
  name: string;
  headers: string[];
  headerHash: string;
  fields: MappingFields;
  fileCategories: unknown;
  distributorId: string | null;
  changedById: string | null;
  createdAt: string;
  /** what differs from the previous revision (null for the first) */
  changedFields: string[] | null;
}

export async function listRevisions(
  db: Queryable,
  mappingId: string,
  opts: { sortOrder: 'asc' | 'desc'; limit: number; offset: number },
): Promise<{ rows: MappingRevision[]; total: number }> {
  const direction = sortDirection(opts.sortOrder);
  const { rows } = await db.query<{
    revision: number;
    name: string;
    headers: string[];
    header_hash: string;
    fields: MappingFields;
    file_categories: unknown;
    distributor_id: string | null;
    changed_by: string | null;
    created_at: Date;
    previous: {
      name: string;
      headers: string[];
      header_hash: string;
      fields: MappingFields;
      file_categories: unknown;
      distributor_id: string | null;
    } | null;
    total: number;
  }>(
    `SELECT r.revision, r.name, r.headers, r.header_hash, r.fields, r.file_categories, r.distributor_id, r.changed_by, r.created_at,
       (SELECT json_build_object('name', p.name, 'headers', p.headers, 'header_hash', p.header_hash, 'fields', p.fields,
          'file_categories', p.file_categories, 'distributor_id', p.distributor_id)
        FROM mapping_revisions p WHERE p.mapping_id = r.mapping_id AND p.revision < r.revision ORDER BY p.revision DESC LIMIT 1) AS previous,
       count(*) OVER () AS total
     FROM mapping_revisions r WHERE r.mapping_id = $1
     ORDER BY r.revision ${direction} LIMIT $2 OFFSET $3`,
    [mappingId, opts.limit, opts.offset],
  );
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && opts.offset > 0) {
    total = (
      await db.query<{ n: number }>(
        `SELECT count(*) AS n FROM mapping_revisions WHERE mapping_id = $1`,
        [mappingId],
      )
    ).rows[0]!.n;
  }
  return {
    total,
    rows: rows.map((r) => {
      const now = {
        name: r.name,
        headers: r.headers,
        headerHash: r.header_hash,
        fields: r.fields,
        fileCategories: r.file_categories,
        distributorId: r.distributor_id,
      };
      const before = r.previous && {
        name: r.previous.name,
        headers: r.previous.headers,
        headerHash: r.previous.header_hash,
        fields: r.previous.fields,
        fileCategories: r.previous.file_categories,
        distributorId: r.previous.distributor_id,
      };
      return {
        mappingId,
        revision: r.revision,
        ...now,
        changedById: r.changed_by,
        createdAt: r.created_at.toISOString(),
        changedFields: before ? Object.keys(changesOf(before, now, changeable) ?? {}) : null,
      };
    }),
  };
}

/** The standard fields whose specification differs between two mappings' fields. */
export function differingFields(a: MappingFields | null, b: MappingFields): StandardField[] {
  return standardFields.filter((f) => canonicalJson(a?.[f]) !== canonicalJson(b[f]));
}

// ---------------------------------------------------------------------------------------------
// Redrive: which statements a mapping would change

/** Statuses a statement can be reprocessed from (the pipeline's own list). */
export const REDRIVABLE_STATUSES = [
  'uploaded',
  'processing',
  'processed',
  'needs_mapping',
  'failed',
] as const;

export interface RedriveCandidate {
  id: string;
  fileName: string;
  status: string;
  mappingId: string | null;
  mappingRevision: number | null;
  /** why a redrive would change it */
  reason: 'needs_mapping' | 'older_revision' | 'other_mapping';
  /** the standard fields whose specification differs from what it was processed with */
  changedFields: StandardField[];
}

export interface RedrivePreview {
  mappingId: string;
  revision: number;
  headerHash: string;
  source: Source;
  /** an organization mapping for the same header hash that statements use instead of this library one */
  shadowedBy: string | null;
  total: number;
  statements: RedriveCandidate[];
}

const REDRIVE_PREVIEW_LIMIT = 2000;

/** `scope`: the caller's data access; statements of other rightsholders are neither listed nor counted. */
export async function redrivePreview(
  db: Queryable,
  organizationId: string,
  mapping: MappingRecord,
  scope: RightsholderScope,
): Promise<RedrivePreview> {
  const base = {
    mappingId: mapping.id,
    revision: mapping.revision,
    headerHash: mapping.headerHash,
    source: mapping.source,
  };
  if (!mapping.active) {
    const shadow = await findMappingByHeaderHash(db, organizationId, mapping.headerHash);
    return { ...base, shadowedBy: shadow?.id ?? null, total: 0, statements: [] };
  }
  const { rows } = await db.query<{
    id: string;
    file_name: string;
    status: string;
    mapping_id: string | null;
    mapping_revision: number | null;
    old_fields: MappingFields | null;
    total: number;
  }>(
    `SELECT s.id, s.file_name, s.status, s.mapping_id, s.mapping_revision, r.fields AS old_fields, count(*) OVER () AS total
     FROM statements s
     LEFT JOIN mapping_revisions r ON r.mapping_id = s.mapping_id AND r.revision = s.mapping_revision
     WHERE s.organization_id = $1 AND s.header_hash = $2 AND s.deleted_at IS NULL AND ${inRightsholderScope('s.rightsholder_id', '$5')}
       AND (s.status = 'needs_mapping'
         OR (s.status IN ('processed', 'failed') AND s.mapping_id IS NOT NULL
             AND (s.mapping_id <> $3 OR s.mapping_revision IS DISTINCT FROM $4)))
     ORDER BY s.created_at, s.id
     LIMIT ${REDRIVE_PREVIEW_LIMIT}`,
    [organizationId, mapping.headerHash, mapping.id, mapping.revision, scope],
  );
  return {
    ...base,
    shadowedBy: null,
    total: rows[0]?.total ?? 0,
    statements: rows.map((r) => ({
      id: r.id,
      fileName: r.file_name,
      status: r.status,
      mappingId: r.mapping_id,
      mappingRevision: r.mapping_revision,
      reason:
        r.status === 'needs_mapping'
          ? 'needs_mapping'
          : r.mapping_id === mapping.id
            ? 'older_revision'
            : 'other_mapping',
      changedFields: differingFields(
        r.status === 'needs_mapping' ? null : r.old_fields,
        mapping.fields,
      ),
    })),
  };
}

export interface RedriveStatement {
  id: string;
  fileName: string;
  status: string;
  headerHash: string | null;
  headers: string[] | null;
  mappingId: string | null;
}

/**
 * The statements named for a redrive: all of the organization, within the caller's data access
 * (`scope`), not deleted, and processable.
 */
export async function redriveStatements(
  db: Queryable,
  organizationId: string,
  ids: readonly string[],
  scope: RightsholderScope,
): Promise<RedriveStatement[]> {
  const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
  if (unique.length === 0) return [];
  const { rows } = await db.query<RedriveStatement>(
    `SELECT id, file_name AS "fileName", status, header_hash AS "headerHash", headers, mapping_id AS "mappingId"
     FROM statements WHERE organization_id = $1 AND id = ANY($2::uuid[]) AND deleted_at IS NULL AND ${inRightsholderScope('rightsholder_id', '$3')}`,
    [organizationId, unique, scope],
  );
  const found = new Set(rows.map((r) => r.id));
  const missing = unique.filter((id) => !found.has(id));
  if (missing.length > 0) {
    throw new AppError(
      'STATEMENT_NOT_FOUND',
      `No statement ${missing.slice(0, 5).join(', ')} in the organization`,
      { details: { statementIds: missing.slice(0, 50) } },
    );
  }
  const stuck = rows.filter((r) => !(REDRIVABLE_STATUSES as readonly string[]).includes(r.status));
  if (stuck.length > 0) {
    throw new AppError(
      'STATEMENT_STATE_CONFLICT',
      `A statement that is ${stuck[0]!.status} cannot be reprocessed`,
      {
        details: { statements: stuck.slice(0, 50).map((s) => ({ id: s.id, status: s.status })) },
      },
    );
  }
  return rows;
}

export interface VerificationProblem {
  statementId: string;
  fileName: string;
  problem: 'missing_columns' | 'detached';
  columns?: string[];
}

export interface Verification {
  /** statements the mapping would apply to */
  statements: number;
  problems: VerificationProblem[];
}

/**
 * Checks a mapping (as it will be saved) against the statements it would apply to: those of the
 * organization with its header hash and those named for a redrive. Also reports statements
 * processed with it that a change of headers would detach (they would no longer find it).
 */
export async function verifyMapping(
  db: Queryable,
  organizationId: string,
  mapping: MappingRecord,
  redrive: readonly RedriveStatement[],
): Promise<Verification> {
  const { rows } = await db.query<RedriveStatement>(
    `SELECT id, file_name AS "fileName", status, header_hash AS "headerHash", headers, mapping_id AS "mappingId"
     FROM statements
     WHERE organization_id = $1 AND deleted_at IS NULL AND (header_hash = $2 OR mapping_id = $3)
     ORDER BY created_at, id LIMIT 10000`,
    [organizationId, mapping.headerHash, mapping.id],
  );
  const byId = new Map<string, RedriveStatement>();
  for (const s of [...rows, ...redrive]) byId.set(s.id, s);
  const problems: VerificationProblem[] = [];
  let applies = 0;
  const columns = referencedColumnsOf(mapping.fields);
  for (const s of byId.values()) {
    const named = redrive.some((r) => r.id === s.id);
    if (s.headerHash !== mapping.headerHash && !named) {
      problems.push({ statementId: s.id, fileName: s.fileName, problem: 'detached' });
      continue;
    }
    applies++;
    if (s.headers === null) continue;
    const known = new Set(s.headers.map(headerKey));
    const missing = columns.filter((c) => !known.has(headerKey(c)));
    if (missing.length > 0)
      problems.push({
        statementId: s.id,
        fileName: s.fileName,
        problem: 'missing_columns',
        columns: missing,
      });
  }
  return { statements: applies, problems };
}

/** The columns a mapping reads, in the order of the standard fields (stored jsonb has its own key order). */
function referencedColumnsOf(fields: MappingFields): string[] {
  const out = new Set<string>();
  for (const spec of standardFields.map((f) => fields[f])) {
    if (spec?.column !== undefined) out.add(spec.column);
    for (const c of spec?.columns ?? []) out.add(c);
  }
  return [...out];
}
