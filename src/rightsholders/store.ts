// Rightsholders (artists, labels, publishers) of an organization: one small function per
// operation. Every read and write goes through a RightsholderAccess, so a member restricted by a
// data-access role never reaches a rightsholder outside it: those answer RIGHTSHOLDER_NOT_FOUND,
// exactly like ids of other organizations.
import { inRightsholderScope, type RightsholderScope } from '../access/dataAccess.ts';
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import { likeContains, sortDirection } from '../db/sql.ts';

export interface Rightsholder {
  id: string;
  name: string;
  organizationId: string;
  legalName: string | null;
  aliases: string[];
  ipiNameNumbers: string[];
  isnis: string[];
  streamingArtistIds: string[];
  storeArtistIds: string[];
  videoChannelIds: string[];
  isPublisherGroup: boolean;
  lastUpdatedById: string | null;
  isDeleted: boolean;
  createdAt: string;
  updatedAt: string;
}

/** The fields a caller sets; everything else is the server's. */
export type RightsholderFields = Pick<
  Rightsholder,
  | 'name'
  | 'legalName'
  | 'aliases'
  | 'ipiNameNumbers'
  | 'isnis'
  | 'streamingArtistIds'
  | 'storeArtistIds'
  | 'videoChannelIds'
  | 'isPublisherGroup'
  | 'isDeleted'
>;

export const changeableFields = [
  'name',
  'legalName',
  'aliases',
  'ipiNameNumbers',
  'isnis',
  'streamingArtistIds',
  'storeArtistIds',
  'videoChannelIds',
  'isPublisherGroup',
  'isDeleted',
] as const satisfies readonly (keyof RightsholderFields)[];

export interface RightsholderAccess {
  organizationId: string;
  userId: string;
  scope: RightsholderScope;
}

interface Row {
  id: string;
  organization_id: string;
  name: string;
  legal_name: string | null;
  aliases: string[];
  ipi_name_numbers: string[];
  isnis: string[];
  streaming_artist_ids: string[];
  store_artist_ids: string[];
  video_channel_ids: string[];
  is_publisher_group: boolean;
  last_updated_by_id: string | null;
  deleted_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `r.id, r.organization_id, r.name, r.legal_name, r.aliases, r.ipi_name_numbers, r.isnis,
  r.streaming_artist_ids, r.store_artist_ids, r.video_channel_ids, r.is_publisher_group,
  r.last_updated_by_id, r.deleted_at, r.created_at, r.updated_at`;

function toRightsholder(row: Row): Rightsholder {
  return {
    id: row.id,
    name: row.name,
    organizationId: row.organization_id,
    legalName: row.legal_name,
    aliases: row.aliases,
    ipiNameNumbers: row.ipi_name_numbers,
    isnis: row.isnis,
    streamingArtistIds: row.streaming_artist_ids,
    storeArtistIds: row.store_artist_ids,
    videoChannelIds: row.video_channel_ids,
    isPublisherGroup: row.is_publisher_group,
    lastUpdatedById: row.last_updated_by_id,
    isDeleted: row.deleted_at !== null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const NAME_CONSTRAINT = 'rightsholders_org_name_key';

async function writing<T>(name: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    const pgError = error as { code?: string; constraint?: string };
    if (pgError.code === '23505' && pgError.constraint === NAME_CONSTRAINT) {
      throw new AppError(
        'RIGHTSHOLDER_NAME_TAKEN',
        `A rightsholder named "${name}" already exists in the organization`,
        { cause: error },
      );
    }
    throw error;
  }
}

/** The rightsholder, if the caller may see it; `lock` holds it for the rest of the transaction. */
export async function getRightsholder(
  db: Queryable,
  access: RightsholderAccess,
  id: string,
  opts: { lock?: boolean } = {},
): Promise<Rightsholder> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM rightsholders r
     WHERE r.organization_id = $1 AND r.id = $2 AND ${inRightsholderScope('r.id', '$3')}
     ${opts.lock ? 'FOR UPDATE' : ''}`,
    [access.organizationId, id, access.scope],
  );
  if (!rows[0]) throw new AppError('RIGHTSHOLDER_NOT_FOUND');
  return toRightsholder(rows[0]);
}

/** Which of these ids are rightsholders of the organization within the caller's scope, not deleted. */
export async function visibleLiveRightsholderIds(
  db: Queryable,
  access: Pick<RightsholderAccess, 'organizationId' | 'scope'>,
  ids: readonly string[],
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT r.id::text FROM rightsholders r
     WHERE r.organization_id = $1 AND r.id = ANY ($2::uuid[]) AND r.deleted_at IS NULL AND ${inRightsholderScope('r.id', '$3')}`,
    [access.organizationId, ids, access.scope],
  );
  return rows.map((r) => r.id);
}

/** Locks several at once, in id order so that concurrent batches cannot deadlock. */
export async function lockRightsholders(
  db: Queryable,
  access: RightsholderAccess,
  ids: string[],
): Promise<Map<string, Rightsholder>> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM rightsholders r
     WHERE r.organization_id = $1 AND r.id = ANY($2::uuid[]) AND ${inRightsholderScope('r.id', '$3')}
     ORDER BY r.id FOR UPDATE`,
    [access.organizationId, ids, access.scope],
  );
  return new Map(rows.map((row) => [row.id, toRightsholder(row)]));
}

export async function createRightsholder(
  db: Queryable,
  organizationId: string,
  userId: string,
  fields: Omit<RightsholderFields, 'isDeleted'>,
): Promise<Rightsholder> {
  const { rows } = await writing(fields.name, () =>
    db.query<Row>(
      `INSERT INTO rightsholders AS r (organization_id, name, legal_name, aliases, ipi_name_numbers, isnis,
         streaming_artist_ids, store_artist_ids, video_channel_ids, is_publisher_group, last_updated_by_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       RETURNING ${COLUMNS}`,
      [
        organizationId,
        fields.name,
        fields.legalName,
        fields.aliases,
        fields.ipiNameNumbers,
        fields.isnis,
        fields.streamingArtistIds,
        fields.storeArtistIds,
        fields.videoChannelIds,
        fields.isPublisherGroup,
        userId,
      ],
    ),
  );
  return toRightsholder(rows[0]!);
}

/** Writes the given fields over the current record; the caller becomes lastUpdatedById. */
export async function updateRightsholder(
  db: Queryable,
  current: Rightsholder,
  fields: RightsholderFields,
  userId: string,
): Promise<Rightsholder> {
  const { rows } = await writing(fields.name, () =>
    db.query<Row>(
      `UPDATE rightsholders AS r SET
         name = $3, legal_name = $4, aliases = $5, ipi_name_numbers = $6, isnis = $7,
         streaming_artist_ids = $8, store_artist_ids = $9, video_channel_ids = $10, is_publisher_group = $11,
         deleted_at = CASE WHEN $12::boolean THEN COALESCE(r.deleted_at, clock_timestamp()) END,
         last_updated_by_id = $13, updated_at = clock_timestamp()
       WHERE r.organization_id = $1 AND r.id = $2
       RETURNING ${COLUMNS}`,
      [
        current.organizationId,
        current.id,
        fields.name,
        fields.legalName,
        fields.aliases,
        fields.ipiNameNumbers,
        fields.isnis,
        fields.streamingArtistIds,
        fields.storeArtistIds,
        fields.videoChannelIds,
        fields.isPublisherGroup,
        fields.isDeleted,
        userId,
      ],
    ),
  );
  return toRightsholder(rows[0]!);
}

export function fieldsOf(r: Rightsholder): RightsholderFields {
  return {
    name: r.name,
    legalName: r.legalName,
    aliases: r.aliases,
    ipiNameNumbers: r.ipiNameNumbers,
    isnis: r.isnis,
    streamingArtistIds: r.streamingArtistIds,
    storeArtistIds: r.storeArtistIds,
    videoChannelIds: r.videoChannelIds,
    isPublisherGroup: r.isPublisherGroup,
    isDeleted: r.isDeleted,
  };
}

export const rightsholderSorts = ['name', 'createdAt', 'updatedAt'] as const;
export type RightsholderSortBy = (typeof rightsholderSorts)[number];

/** An explicit column and direction, or the member's home-page preference. */
export type RightsholderOrder =
  | { kind: 'explicit'; sortBy: RightsholderSortBy; sortOrder: 'asc' | 'desc' }
  | { kind: 'preference'; sort: 'last_updated' | 'alphabetical' | 'recently_created' };

function orderBy(order: RightsholderOrder): string {
  if (order.kind === 'preference') {
    switch (order.sort) {
      // the later of a change and the member's own last visit: what they were working on
      case 'last_updated':
        return 'GREATEST(r.updated_at, v.last_visited_at) DESC, r.id DESC';
      case 'recently_created':
        return 'r.created_at DESC, r.id DESC';
      case 'alphabetical':
        return 'lower(r.name) ASC, r.id ASC';
    }
  }
  const dir = sortDirection(order.sortOrder);
  const column = { name: 'lower(r.name)', createdAt: 'r.created_at', updatedAt: 'r.updated_at' }[
    order.sortBy
  ];
  return `${column} ${dir}, r.id ${dir}`;
}

export async function listRightsholders(
  db: Queryable,
  access: RightsholderAccess,
  opts: {
    search?: string | undefined;
    includeDeleted: boolean;
    order: RightsholderOrder;
    limit: number;
    offset: number;
  },
): Promise<{ rows: Rightsholder[]; total: number }> {
  const params: unknown[] = [access.organizationId, access.scope, access.userId];
  const where = ['r.organization_id = $1', inRightsholderScope('r.id', '$2')];
  if (!opts.includeDeleted) where.push('r.deleted_at IS NULL');
  if (opts.search) {
    params.push(likeContains(opts.search));
    const p = `$${params.length}`;
    where.push(
      `(r.name ILIKE ${p} OR r.legal_name ILIKE ${p} OR EXISTS (SELECT 1 FROM unnest(r.aliases) a WHERE a ILIKE ${p}))`,
    );
  }
  const from = `FROM rightsholders r
    LEFT JOIN subject_visits v ON v.organization_id = r.organization_id AND v.user_id = $3
      AND v.subject_type = 'rightsholder' AND v.subject_id = r.id::text
    WHERE ${where.join(' AND ')}`;
  const count = await db.query<{ total: number }>(`SELECT count(*) AS total ${from}`, params);
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} ${from} ORDER BY ${orderBy(opts.order)} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, opts.limit, opts.offset],
  );
  return { rows: rows.map(toRightsholder), total: count.rows[0]!.total };
}

export async function deleteRightsholder(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<void> {
  await db.query('DELETE FROM rightsholders WHERE organization_id = $1 AND id = $2', [
    organizationId,
    id,
  ]);
}
