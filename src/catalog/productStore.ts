// The SQL of products as the product procedures read and correct them: within the caller's reach
// (organization and data access), with the trail of their corrections (product_overrides) and
// their links to musical details.
import { inRightsholderScope } from '../access/dataAccess.ts';
import type { Queryable } from '../db/pool.ts';
import { likeContains, sortable } from '../db/sql.ts';
import { AppError } from '../errors.ts';
import type { Caller } from './musicalDetails.ts';
import { productOverrideFields } from './products.ts';

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

const PRODUCT_COLUMNS = `p.id, p.block_id AS "blockId", b.rightsholder_id AS "rightsholderId", p.kind, p.stable_key AS "stableKey",
  p.parent_id AS "parentId", p.cluster_id AS "clusterId", p.title, p.artist, p.isrc, p.upc, p.release_date::text AS "releaseDate",
  p.genres, p.song_writers AS "songWriters", p.composers, p.image_url AS "imageUrl", usd_answer(p.earnings)::text AS earnings,
  p.musical_detail_count AS "musicalDetailCount", p.created_at AS "createdAt", p.updated_at AS "updatedAt"`;

type Row = Omit<ProductRecord, 'overriddenFields' | 'trail' | 'createdAt' | 'updatedAt'> & {
  createdAt: Date;
  updatedAt: Date;
};

/** The corrections of these products, oldest first, by product. */
export async function overridesOfProducts(
  db: Queryable,
  ids: readonly string[],
): Promise<Map<string, ProductOverride[]>> {
  const { rows } = await db.query<ProductOverride & { productId: string }>(
    `SELECT id, product_id AS "productId", kind, "values", created_by AS "createdBy", created_at AS "createdAt"
     FROM product_overrides WHERE product_id = ANY ($1::uuid[]) ORDER BY created_at, id`,
    [ids],
  );
  const byProduct = new Map<string, ProductOverride[]>();
  for (const { productId, ...o } of rows) {
    byProduct.set(productId, [
      ...(byProduct.get(productId) ?? []),
      { ...o, createdAt: new Date(o.createdAt).toISOString() },
    ]);
  }
  return byProduct;
}

/** Records of these product rows, with the fields users corrected (and the trail when asked). */
async function productRecords(
  db: Queryable,
  rows: Row[],
  includeTrail: boolean,
): Promise<ProductRecord[]> {
  const byProduct = await overridesOfProducts(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => {
    const trail = byProduct.get(r.id) ?? [];
    const record: ProductRecord = {
      ...r,
      overriddenFields: productOverrideFields.filter((f) =>
        trail.some((o) => o.kind === 'update_by_id' && o.values[f] !== undefined),
      ),
      createdAt: r.createdAt.toISOString(),
      updatedAt: r.updatedAt.toISOString(),
    };
    if (includeTrail) record.trail = trail;
    return record;
  });
}

/** These products, in the order asked; PRODUCT_NOT_FOUND when any is not visible (or not in the block). */
export async function visibleProducts(
  db: Queryable,
  caller: Caller,
  ids: readonly string[],
  opts: { blockId?: string; includeTrail?: boolean } = {},
): Promise<ProductRecord[]> {
  const unique = [...new Set(ids.map((i) => i.toLowerCase()))];
  const { rows } = await db.query<Row>(
    `SELECT ${PRODUCT_COLUMNS} FROM products p JOIN catalog_blocks b ON b.id = p.block_id
     WHERE p.organization_id = $1 AND p.id = ANY ($2::uuid[]) AND ${inRightsholderScope('b.rightsholder_id', '$3')}
       AND ($4::uuid IS NULL OR p.block_id = $4::uuid)`,
    [caller.organizationId, unique, caller.rightsholderScope, opts.blockId ?? null],
  );
  if (rows.length !== unique.length) {
    const found = new Set(rows.map((r) => r.id));
    throw new AppError(
      'PRODUCT_NOT_FOUND',
      `Products not found: ${unique
        .filter((id) => !found.has(id))
        .slice(0, 10)
        .join(', ')}`,
    );
  }
  const byId = new Map(rows.map((r) => [r.id, r]));
  return productRecords(
    db,
    unique.map((id) => byId.get(id)!),
    opts.includeTrail ?? false,
  );
}

/** Of these product ids, those that still exist. */
export async function existingProductIds(
  db: Queryable,
  ids: readonly string[],
): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM products WHERE id = ANY ($1::uuid[])',
    [ids],
  );
  return new Set(rows.map((r) => r.id));
}

const productSort = sortable(
  {
    title: 'lower(p.title)',
    artist: 'lower(p.artist)',
    earnings: 'p.earnings',
    releaseDate: 'p.release_date',
    musicalDetailCount: 'p.musical_detail_count',
    kind: 'p.kind',
    createdAt: 'p.created_at',
  },
  'p.id',
  { nullsLast: true },
);
export const productSorts = productSort.keys;
export type ProductSort = (typeof productSorts)[number];

/** The block's products whose title or artist contains `search` (case-insensitive; null: all). */
const BLOCK_PRODUCTS_WHERE =
  'p.block_id = $1 AND ($2::text IS NULL OR p.title ILIKE $2 OR p.artist ILIKE $2)';

/** `search` as an ILIKE pattern matching it anywhere, its wildcards taken literally; null for no search. */
function containsPattern(search: string | undefined): string | null {
  return search?.trim() ? likeContains(search.trim()) : null;
}

export async function countProductsOfBlock(
  db: Queryable,
  blockId: string,
  search: string | undefined,
): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM products p WHERE ${BLOCK_PRODUCTS_WHERE}`,
    [blockId, containsPattern(search)],
  );
  return rows[0]!.n;
}

/** One page of the block's products (matching `search`) in the order asked, ties by id. */
export async function productPageOfBlock(
  db: Queryable,
  blockId: string,
  opts: {
    search?: string | undefined;
    sortBy: ProductSort;
    sortOrder: 'asc' | 'desc';
    limit: number;
    offset: number;
  },
): Promise<ProductRecord[]> {
  const order = productSort.orderBy(opts.sortBy, opts.sortOrder);
  const { rows } = await db.query<Row>(
    `SELECT ${PRODUCT_COLUMNS} FROM products p JOIN catalog_blocks b ON b.id = p.block_id WHERE ${BLOCK_PRODUCTS_WHERE} ORDER BY ${order} LIMIT $3 OFFSET $4`,
    [blockId, containsPattern(opts.search), opts.limit, opts.offset],
  );
  return productRecords(db, rows, false);
}

export interface ProductLink {
  productId: string;
  musicalDetailId: string;
  source: 'auto' | 'user';
}

/** The links of these products to their musical details. */
export async function linksOfProducts(
  db: Queryable,
  productIds: readonly string[],
): Promise<ProductLink[]> {
  const { rows } = await db.query<ProductLink>(
    'SELECT product_id AS "productId", musical_detail_id AS "musicalDetailId", source FROM product_musical_details WHERE product_id = ANY ($1::uuid[])',
    [productIds],
  );
  return rows;
}

/** The links of these musical details to products. */
export async function linksOfDetails(
  db: Queryable,
  musicalDetailIds: readonly string[],
): Promise<ProductLink[]> {
  const { rows } = await db.query<ProductLink>(
    'SELECT product_id AS "productId", musical_detail_id AS "musicalDetailId", source FROM product_musical_details WHERE musical_detail_id = ANY ($1::uuid[])',
    [musicalDetailIds],
  );
  return rows;
}

const linkedDetailSort = sortable(
  {
    title: 'lower(md.title)',
    artist: 'lower(md.artist)',
    earnings: 'md.earnings_usd',
    rowCount: 'md.row_count',
    state: 'md.state',
    createdAt: 'md.created_at',
  },
  'md.id',
  { nullsLast: true },
);
export const linkedDetailSorts = linkedDetailSort.keys;
export type LinkedDetailSort = (typeof linkedDetailSorts)[number];

/**
 * One page of the musical details linked to the product, in the order asked (nulls last, ties by
 * id), each with the source of its link and `total`, the count of all its links (a page past the
 * end has no row to carry it: countLinkedDetails).
 */
export async function linkedDetailPage(
  db: Queryable,
  productId: string,
  opts: { sortBy: LinkedDetailSort; sortOrder: 'asc' | 'desc'; limit: number; offset: number },
): Promise<{ id: string; source: 'auto' | 'user'; total: number }[]> {
  const order = linkedDetailSort.orderBy(opts.sortBy, opts.sortOrder);
  const { rows } = await db.query<{ id: string; source: 'auto' | 'user'; total: number }>(
    `SELECT md.id, pmd.source, count(*) OVER ()::int AS total FROM product_musical_details pmd JOIN musical_details md ON md.id = pmd.musical_detail_id
     WHERE pmd.product_id = $1 ORDER BY ${order} LIMIT $2 OFFSET $3`,
    [productId, opts.limit, opts.offset],
  );
  return rows;
}

export async function countLinkedDetails(db: Queryable, productId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM product_musical_details WHERE product_id = $1',
    [productId],
  );
  return rows[0]!.n;
}

export interface ProductCorrection {
  organizationId: string;
  blockId: string;
  productKey: string;
  productId: string;
  /** update_by_id: values of the product; link: { identityKey, action: add | remove } of a musical detail */
  kind: 'update_by_id' | 'link';
  values: Record<string, unknown>;
  createdBy: string;
}

/** Keeps a user's correction of a product, laid over the derived values on every refresh. */
export async function insertProductOverride(db: Queryable, c: ProductCorrection): Promise<void> {
  await db.query(
    `INSERT INTO product_overrides (organization_id, block_id, product_key, product_id, kind, "values", created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      c.organizationId,
      c.blockId,
      c.productKey,
      c.productId,
      c.kind,
      JSON.stringify(c.values),
      c.createdBy,
    ],
  );
}

export interface KindCounts {
  type: 'track' | 'album';
  products: number;
  musicalDetails: number;
}

/** Per kind of product (the caller's, or one block's): products and the musical details linked to them. */
export async function productCountsByKind(
  db: Queryable,
  caller: Caller,
  blockId: string | null,
): Promise<KindCounts[]> {
  const { rows } = await db.query<KindCounts>(
    `SELECT p.kind AS type, count(DISTINCT p.id)::int AS products, count(DISTINCT pmd.musical_detail_id)::int AS "musicalDetails"
     FROM products p JOIN catalog_blocks b ON b.id = p.block_id
     LEFT JOIN product_musical_details pmd ON pmd.product_id = p.id
     WHERE p.organization_id = $1 AND ($2::uuid IS NULL OR p.block_id = $2) AND ${inRightsholderScope('b.rightsholder_id', '$3')}
     GROUP BY p.kind`,
    [caller.organizationId, blockId, caller.rightsholderScope],
  );
  return rows;
}
