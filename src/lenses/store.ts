// Lenses (saved analytics views). A personal lens exists only for its owner: to anybody else
// its id answers LENS_NOT_FOUND, like an id of another organization. `pinned` and
// `lastOpenedAt` are the reading member's own (lens_pins, subject_visits).
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';

export const lensScopes = ['personal', 'organization'] as const;
export type LensScope = (typeof lensScopes)[number];
export const lensKinds = [
  'query',
  'pivot',
  'funnel',
  'flow',
  'retention',
  'drill_down',
  'valuation',
] as const;
export type LensKind = (typeof lensKinds)[number];

export interface Lens {
  id: string;
  organizationId: string;
  name: string;
  description: unknown;
  scope: LensScope;
  tags: string[];
  kind: LensKind;
  viewName: unknown;
  payload: unknown;
  pinned: boolean;
  ownerUserId: string | null;
  createdAt: string;
  updatedAt: string;
  lastOpenedAt: string | null;
}

// a type, not an interface: diffFields compares it as a record of fields
export type LensFields = {
  name: string;
  description: unknown;
  scope: LensScope;
  tags: string[];
  kind: LensKind;
  viewName: unknown;
  payload: unknown;
};

/** Who is reading: the organization and the member. */
export interface LensViewer {
  organizationId: string;
  userId: string;
}

export interface LensRow {
  id: string;
  organization_id: string;
  owner_user_id: string | null;
  name: string;
  description: unknown;
  scope: LensScope;
  tags: string[];
  kind: LensKind;
  view_name: unknown;
  payload: unknown;
  pinned: boolean;
  created_at: Date;
  updated_at: Date;
  last_opened_at: Date | null;
}

/** Selects a lens with the viewer's pin and last open; $1 is the organization, $2 the viewer. */
export const LENS_FROM = `FROM lenses l
  LEFT JOIN lens_pins p ON p.lens_id = l.id AND p.user_id = $2
  LEFT JOIN subject_visits v ON v.organization_id = l.organization_id AND v.user_id = $2
    AND v.subject_type = 'lens' AND v.subject_id = l.id::text
  WHERE l.organization_id = $1 AND (l.scope = 'organization' OR l.owner_user_id = $2)`;

export const LENS_COLUMNS = `l.id, l.organization_id, l.owner_user_id, l.name, l.description, l.scope, l.tags, l.kind,
  l.view_name, l.payload, p.user_id IS NOT NULL AS pinned, l.created_at, l.updated_at, v.last_visited_at AS last_opened_at`;

export function toLens(row: LensRow): Lens {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    description: row.description,
    scope: row.scope,
    tags: row.tags,
    kind: row.kind,
    viewName: row.view_name,
    payload: row.payload,
    pinned: row.pinned,
    ownerUserId: row.owner_user_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    lastOpenedAt: row.last_opened_at ? row.last_opened_at.toISOString() : null,
  };
}

/** JSON for a jsonb parameter; an absent value is SQL NULL. */
function json(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

/** The lens, if the viewer may see it; `lock` holds it for the rest of the transaction. */
export async function getLens(
  db: Queryable,
  viewer: LensViewer,
  id: string,
  opts: { lock?: boolean } = {},
): Promise<Lens> {
  const { rows } = await db.query<LensRow>(
    `SELECT ${LENS_COLUMNS} ${LENS_FROM} AND l.id = $3 ${opts.lock ? 'FOR UPDATE OF l' : ''}`,
    [viewer.organizationId, viewer.userId, id],
  );
  if (!rows[0]) throw new AppError('LENS_NOT_FOUND');
  return toLens(rows[0]);
}

export async function insertLens(
  db: Queryable,
  viewer: LensViewer,
  fields: LensFields,
): Promise<Lens> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO lenses (organization_id, owner_user_id, name, description, scope, tags, kind, view_name, payload)
     VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8::jsonb, $9::jsonb)
     RETURNING id`,
    [
      viewer.organizationId,
      viewer.userId,
      fields.name,
      json(fields.description),
      fields.scope,
      fields.tags,
      fields.kind,
      json(fields.viewName),
      json(fields.payload),
    ],
  );
  return getLens(db, viewer, rows[0]!.id);
}

export async function updateLens(
  db: Queryable,
  viewer: LensViewer,
  id: string,
  fields: LensFields,
): Promise<Lens> {
  await db.query(
    `UPDATE lenses SET name = $3, description = $4::jsonb, scope = $5, tags = $6, kind = $7, view_name = $8::jsonb,
       payload = $9::jsonb, updated_at = clock_timestamp()
     WHERE organization_id = $1 AND id = $2`,
    [
      viewer.organizationId,
      id,
      fields.name,
      json(fields.description),
      fields.scope,
      fields.tags,
      fields.kind,
      json(fields.viewName),
      json(fields.payload),
    ],
  );
  return getLens(db, viewer, id);
}

export async function deleteLens(db: Queryable, organizationId: string, id: string): Promise<void> {
  await db.query('DELETE FROM lenses WHERE organization_id = $1 AND id = $2', [organizationId, id]);
}

export async function setPin(
  db: Queryable,
  userId: string,
  lensId: string,
  pinned: boolean,
): Promise<void> {
  if (pinned) {
    await db.query(
      'INSERT INTO lens_pins (lens_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING',
      [lensId, userId],
    );
  } else {
    await db.query('DELETE FROM lens_pins WHERE lens_id = $1 AND user_id = $2', [lensId, userId]);
  }
}

/**
 * Tags are one tag whatever their case (`x` and `X`): the first spelling is kept. The caller
 * trims them (the input schema does). lens.list's tag filter and listTags compare the same way.
 */
export function uniqueTags(tags: readonly string[]): string[] {
  const seen = new Map<string, string>();
  for (const tag of tags) if (!seen.has(tag.toLowerCase())) seen.set(tag.toLowerCase(), tag);
  return [...seen.values()];
}

/** Tags without case: each under the spelling of the oldest lens carrying it, counting lenses. */
export async function listTags(
  db: Queryable,
  viewer: LensViewer,
): Promise<{ tag: string; count: number }[]> {
  const { rows } = await db.query<{ tag: string; count: number }>(
    `SELECT (array_agg(t.tag ORDER BY l.created_at, l.id, t.n))[1] AS tag, count(DISTINCT l.id)::int AS count
     FROM lenses l CROSS JOIN LATERAL unnest(l.tags) WITH ORDINALITY AS t(tag, n)
     WHERE l.organization_id = $1 AND (l.scope = 'organization' OR l.owner_user_id = $2)
     GROUP BY lower(t.tag) ORDER BY 1`,
    [viewer.organizationId, viewer.userId],
  );
  return rows;
}
