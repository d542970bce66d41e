// Reading products within the caller's reach (organization and data access), their musical
// details, and the trail of their corrections.
import { rightsholderScope } from '../../access/dataAccess.ts';
import { visibleDetails, type Caller, type MusicalDetailRecord } from '../../catalog/musicalDetails.ts';
import { productOverrideFields } from '../../catalog/products.ts';
import type { Queryable } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { likeContains } from '../../db/sql.ts';

export interface ProductRecord {
  id: string;
  blockId: string;
  rightsholderId: string;
  kind: 'track' | 'album';
  stableKey: string;
  parentId: string | null;
  clusterId: string | null;
  title: string;
  artist: string | null;
  isrc: string | null;
  upc: string | null;
  releaseDate: string | null;
  genres: string[];
  songWriters: string[];
  composers: string[];
  imageUrl: string | null;
  earnings: string;
  musicalDetailCount: number;
  overriddenFields: string[];
  trail?: ProductOverride[];
  createdAt: string;
  updatedAt: string;
}

export interface ProductOverride {
  id: string;
  kind: string;
  values: Record<string, unknown>;
  createdBy: string | null;
  createdAt: string;
}

export const PRODUCT_COLUMNS = `p.id, p.block_id AS "blockId", b.rightsholder_id AS "rightsholderId", p.kind, p.stable_key AS "stableKey",
  p.parent_id AS "parentId", p.cluster_id AS "clusterId", p.title, p.artist, p.isrc, p.upc, p.release_date::text AS "releaseDate",
  p.genres, p.song_writers AS "songWriters", p.composers, p.image_url AS "imageUrl", p.earnings::text AS earnings,
  p.musical_detail_count AS "musicalDetailCount", p.created_at AS "createdAt", p.updated_at AS "updatedAt"`;

type Row = Omit<ProductRecord, 'overriddenFields' | 'trail' | 'createdAt' | 'updatedAt'> & { createdAt: Date; updatedAt: Date };

/** Records of these product rows, with the fields users corrected (and the trail when asked). */
export async function productRecords(db: Queryable, rows: Row[], includeTrail: boolean): Promise<ProductRecord[]> {
  const { rows: overrides } = await db.query<ProductOverride & { productId: string }>(
    `SELECT id, product_id AS "productId", kind, "values", created_by AS "createdBy", created_at AS "createdAt"
     FROM product_overrides WHERE product_id = ANY ($1::uuid[]) ORDER BY created_at, id`,
    [rows.map((r) => r.id)],
  );
  const byProduct = new Map<string, ProductOverride[]>();
  for (const { productId, ...o } of overrides) {
    byProduct.set(productId, [...(byProduct.get(productId) ?? []), { ...o, createdAt: new Date(o.createdAt).toISOString() }]);
  }
  return rows.map((r) => {
    const trail = byProduct.get(r.id) ?? [];
    const record: ProductRecord = {
      ...r,
      overriddenFields: productOverrideFields.filter((f) => trail.some((o) => o.kind === 'update_by_id' && o.values[f] !== undefined)),
      createdAt: r.createdAt.toISOString(),
      updatedAt: r.updatedAt.toISOString(),
    };
    if (includeTrail) record.trail = trail;
    return record;
  });
}

/** These products, in the order asked; PRODUCT_NOT_FOUND when any is not visible (or not in the block). */
export async function visibleProducts(db: Queryable, caller: Caller, ids: readonly string[], opts: { blockId?: string; includeTrail?: boolean } = {}): Promise<ProductRecord[]> {
  const unique = [...new Set(ids.map((i) => i.toLowerCase()))];
  const scope = await rightsholderScope(db, caller.organizationId, caller.userId);
  const { rows } = await db.query<Row>(
    `SELECT ${PRODUCT_COLUMNS} FROM products p JOIN catalog_blocks b ON b.id = p.block_id
     WHERE p.organization_id = $1 AND p.id = ANY ($2::uuid[]) AND ($3::uuid[] IS NULL OR b.rightsholder_id = ANY ($3::uuid[]))
       AND ($4::uuid IS NULL OR p.block_id = $4::uuid)`,
    [caller.organizationId, unique, scope, opts.blockId ?? null],
  );
  if (rows.length !== unique.length) {
    const found = new Set(rows.map((r) => r.id));
    throw new AppError('PRODUCT_NOT_FOUND', `Products not found: ${unique.filter((id) => !found.has(id)).slice(0, 10).join(', ')}`);
  }
  const byId = new Map(rows.map((r) => [r.id, r]));
  return productRecords(db, unique.map((id) => byId.get(id)!), opts.includeTrail ?? false);
}

export async function listProducts(
  db: Queryable,
  blockId: string,
  opts: { search?: string | undefined; sortBy: string; sortOrder: 'asc' | 'desc'; limit: number; offset: number },
): Promise<{ rows: ProductRecord[]; total: number }> {
  const columns: Record<string, string> = {
    title: 'lower(p.title)',
    artist: 'lower(p.artist)',
    earnings: 'p.earnings',
    releaseDate: 'p.release_date',
    musicalDetailCount: 'p.musical_detail_count',
    kind: 'p.kind',
    createdAt: 'p.created_at',
  };
  const order = `${columns[opts.sortBy] ?? columns.title!} ${opts.sortOrder === 'desc' ? 'DESC' : 'ASC'} NULLS LAST, p.id`;
  const search = opts.search?.trim() ? likeContains(opts.search.trim()) : null;
  const where = `p.block_id = $1 AND ($2::text IS NULL OR p.title ILIKE $2 OR p.artist ILIKE $2)`;
  const total = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM products p WHERE ${where}`, [blockId, search]);
  const { rows } = await db.query<Row>(
    `SELECT ${PRODUCT_COLUMNS} FROM products p JOIN catalog_blocks b ON b.id = p.block_id WHERE ${where} ORDER BY ${order} LIMIT $3 OFFSET $4`,
    [blockId, search, opts.limit, opts.offset],
  );
  return { rows: await productRecords(db, rows, false), total: total.rows[0]!.n };
}

export type LinkedDetail = MusicalDetailRecord & { linkSource: 'auto' | 'user' };

/** The musical details linked to each product, highest USD earnings first. */
export async function linkedDetails(db: Queryable, caller: Caller, productIds: readonly string[], blockId: string): Promise<Map<string, LinkedDetail[]>> {
  const { rows } = await db.query<{ product_id: string; md: string; source: 'auto' | 'user' }>(
    'SELECT product_id, musical_detail_id AS md, source FROM product_musical_details WHERE product_id = ANY ($1::uuid[])',
    [productIds],
  );
  const records = rows.length ? await visibleDetails(db, caller, [...new Set(rows.map((r) => r.md))], blockId) : [];
  const linksOf = new Map<string, typeof rows>();
  for (const link of rows) linksOf.set(link.md, [...(linksOf.get(link.md) ?? []), link]);
  const out = new Map<string, LinkedDetail[]>(productIds.map((id) => [id, []]));
  // records come highest earnings first, so each product's list is in that order
  for (const r of records) for (const link of linksOf.get(r.id) ?? []) out.get(link.product_id)?.push({ ...r, linkSource: link.source });
  return out;
}
