// Shared by the mapping and distributor tests: a statement layout of our own
// with its mapping, and statements written straight into the database for the procedures that
// read them (redrivePreview, updateById verify and redrive).
import type { Test } from 'tap';
import { computeHeaderHash } from '../../../workers/headerHash.ts';
import type { Caller, TestService } from '../../helpers/principals.ts';
import { ok } from '../../helpers/outcome.ts';
import { EUR_REPORT_HEADER, eurReportFields } from '../../helpers/sampleMapping.ts';

export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** A statement layout of our own (not in the library). */
export const HEADERS = EUR_REPORT_HEADER;
export const HASH = computeHeaderHash(HEADERS);
// the euro store report's mapping, monthly by constant
export const FIELDS = { ...eurReportFields, stmtCadence: { constant: 'M' } };

export async function createMapping(
  t: Test,
  caller: Caller,
  extra: Record<string, unknown> = {},
): Promise<any> {
  const headers = (extra.headers as string[] | undefined) ?? HEADERS;
  const input = {
    organizationId: caller.organizationId,
    name: 'Our layout',
    headers,
    headerHash: computeHeaderHash(headers),
    fields: FIELDS,
    ...extra,
  };
  return ok(
    t,
    await caller.client.mutate('mapping.create', input),
    `create mapping ${String(input.name)}`,
  );
}

export async function createDistributor(t: Test, caller: Caller, name: string): Promise<any> {
  return ok(
    t,
    await caller.client.mutate('distributor.create', {
      organizationId: caller.organizationId,
      name,
    }),
    `create distributor ${name}`,
  );
}

/** The library mapping with that key, as the organization sees it. */
export async function libraryMapping(t: Test, caller: Caller, key: string): Promise<any> {
  const res = ok(
    t,
    await caller.client.query('mapping.list', {
      organizationId: caller.organizationId,
      source: 'library',
      pagination: { limit: 2000 },
    }),
  );
  const found = res.data.find((m: any) => m.libraryKey === key);
  if (!found) throw new Error(`no library mapping ${key}`);
  return found;
}

export interface StatementSeed {
  headers?: string[] | null;
  status?: string;
  mappingId?: string | null;
  mappingRevision?: number | null;
  distributorId?: string | null;
  deleted?: boolean;
  fileName?: string;
}

/** A statement row of the organization, as the pipeline leaves one (no file behind it). */
export async function insertStatement(
  srv: TestService,
  organizationId: string,
  seed: StatementSeed = {},
): Promise<string> {
  const db = srv.deps.pool;
  const { rows: rh } = await db.query<{ id: string }>(
    `INSERT INTO rightsholders (organization_id, name) VALUES ($1, 'Seed ' || gen_random_uuid()) RETURNING id`,
    [organizationId],
  );
  const { rows: up } = await db.query<{ id: string }>(
    `INSERT INTO uploads (organization_id) VALUES ($1) RETURNING id`,
    [organizationId],
  );
  const headers = seed.headers === undefined ? HEADERS : seed.headers;
  const status = seed.deleted ? 'deleted' : (seed.status ?? 'processed');
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO statements (organization_id, upload_id, rightsholder_id, distributor_id, mapping_id, mapping_revision, file_name,
       content_type, object_key, status, header_hash, headers, deleted_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'text/csv', 'seed/' || gen_random_uuid(), $8, $9, $10, $11) RETURNING id`,
    [
      organizationId,
      up[0]!.id,
      rh[0]!.id,
      seed.distributorId ?? null,
      seed.mappingId ?? null,
      seed.mappingRevision ?? null,
      seed.fileName ?? 'seed.csv',
      status,
      headers === null ? null : computeHeaderHash(headers),
      headers,
      seed.deleted ? new Date() : null,
    ],
  );
  return rows[0]!.id;
}

/** The activity events of a mapping, newest first: [action, changes]. */
export async function mappingEvents(
  srv: TestService,
  organizationId: string,
  mappingId: string,
): Promise<[string, unknown][]> {
  const { rows } = await srv.deps.pool.query<{ action: string; changes: unknown }>(
    `SELECT action, changes FROM activity_events WHERE organization_id = $1 AND subject_type = 'mapping' AND subject_id = $2 ORDER BY created_at DESC, id DESC`,
    [organizationId, mappingId],
  );
  return rows.map((r) => [r.action, r.changes]);
}

/** A JSON value nested deeper than any bound. */
export function deepJson(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

/** Hostile strings that must be refused or stored harmlessly, never a 500. */
export const hostileStrings = [
  "'; DROP TABLE mappings; --",
  "x' OR '1'='1",
  '%',
  '_',
  '\\',
  'é🎵 ﷽',
  '<script>alert(1)</script>',
  '__proto__',
  'constructor',
];
