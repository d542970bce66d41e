// The query language of musicalDetails.getMusicalDetails, executeQuery and bulk-override rules
// (docs/catalog.md "Musical details: queries, corrections, rules"): JSON, validated by zod,
// compiled to a parameterized WHERE clause over `musical_details md` (joined with
// `catalog_blocks b`). Values never enter the SQL text.
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { likeContains } from '../db/sql.ts';

export const fetchStates = [
  'pending',
  'fetching',
  'found',
  'not_found',
  'skipped',
  'failed',
] as const;

const MAX_LEAVES = 100;
const MAX_DEPTH = 6;
const str = z.string().min(1).max(500);
const decimal = z
  .union([
    z.number().finite(),
    z.string().regex(/^-?\d{1,20}(\.\d{1,20})?$/, 'must be a decimal number'),
  ])
  .transform(String);

const textOps = z
  .strictObject({ contains: str.optional(), equals: z.string().max(500).optional() })
  .refine(oneOp, 'exactly one operator');
const leafShape = {
  title: textOps,
  artist: textOps,
  releaseTitle: textOps,
  releaseArtist: textOps,
  isrc: z.strictObject({ equals: z.string().max(50) }),
  state: z.strictObject({ in: z.array(z.enum(fetchStates)).min(1).max(6) }),
  provider: z.strictObject({ in: z.array(z.string().max(100)).min(1).max(50) }),
  earnings: z
    .strictObject({ gte: decimal.optional(), lte: decimal.optional() })
    .refine((o) => o.gte !== undefined || o.lte !== undefined, 'gte or lte'),
  blockId: z.strictObject({ in: z.array(z.uuid()).min(1).max(1_000) }),
  rightsholderId: z.strictObject({ in: z.array(z.uuid()).min(1).max(1_000) }),
  id: z.strictObject({ in: z.array(z.uuid()).min(1).max(10_000) }),
  ignored: z.strictObject({ equals: z.boolean() }),
} as const;
type LeafField = keyof typeof leafShape;

function oneOp(o: Record<string, unknown>): boolean {
  return Object.values(o).filter((v) => v !== undefined).length === 1;
}

export type Leaf = { [K in LeafField]?: z.output<(typeof leafShape)[K]> };
export type CatalogQuery =
  { and: CatalogQuery[] } | { or: CatalogQuery[] } | { not: CatalogQuery } | Leaf;

const leafSchema = z.strictObject(
  Object.fromEntries(Object.entries(leafShape).map(([k, s]) => [k, s.optional()])) as {
    [K in LeafField]: z.ZodOptional<(typeof leafShape)[K]>;
  },
);

export const catalogQuerySchema: z.ZodType<CatalogQuery> = z.lazy(() =>
  z.union([
    z.strictObject({ and: z.array(catalogQuerySchema).max(MAX_LEAVES) }),
    z.strictObject({ or: z.array(catalogQuerySchema).max(MAX_LEAVES) }),
    z.strictObject({ not: catalogQuerySchema }),
    leafSchema,
  ]),
) as z.ZodType<CatalogQuery>;

/** Parses a query given as any JSON value; BAD_REQUEST CATALOG_QUERY_INVALID with the paths. */
export function parseCatalogQuery(value: unknown): CatalogQuery {
  const q = value === undefined || value === null ? {} : value;
  const parsed = catalogQuerySchema.safeParse(q);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => ({
      path: ['query', ...i.path].join('.'),
      message: i.message,
    }));
    throw new AppError(
      'CATALOG_QUERY_INVALID',
      `Invalid catalog query: ${fields.map((f) => `${f.path}: ${f.message}`).join('; ')}`,
      { details: { fields } },
    );
  }
  let leaves = 0;
  const walk = (node: CatalogQuery, depth: number) => {
    if (depth > MAX_DEPTH)
      throw new AppError(
        'CATALOG_QUERY_INVALID',
        `A catalog query nests at most ${MAX_DEPTH} levels`,
      );
    if ('and' in node && Array.isArray(node.and)) node.and.forEach((n) => walk(n, depth + 1));
    else if ('or' in node && Array.isArray(node.or)) node.or.forEach((n) => walk(n, depth + 1));
    else if ('not' in node && node.not) walk(node.not as CatalogQuery, depth + 1);
    else leaves += Object.keys(node).length;
  };
  walk(parsed.data, 1);
  if (leaves > MAX_LEAVES)
    throw new AppError(
      'CATALOG_QUERY_INVALID',
      `A catalog query has at most ${MAX_LEAVES} conditions`,
    );
  return parsed.data;
}

/** Appends values and returns their placeholders. */
export class Params {
  readonly values: unknown[];
  constructor(initial: unknown[] = []) {
    this.values = [...initial];
  }
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

const TEXT_COLUMNS: Record<
  'title' | 'artist' | 'releaseTitle' | 'releaseArtist',
  { raw: string; fetched: string }
> = {
  title: { raw: 'md.title', fetched: "md.result->>'title'" },
  artist: { raw: 'md.artist', fetched: "md.result->>'artist'" },
  releaseTitle: { raw: 'md.release_title', fetched: "md.result->>'releaseTitle'" },
  releaseArtist: { raw: 'md.release_artist', fetched: "md.result->>'releaseArtist'" },
};

/** A boolean SQL expression over `md` (musical_details) and `b` (catalog_blocks). */
export function compileCatalogQuery(q: CatalogQuery, params: Params): string {
  if ('and' in q && Array.isArray(q.and))
    return q.and.length === 0
      ? 'TRUE'
      : `(${q.and.map((n) => compileCatalogQuery(n, params)).join(' AND ')})`;
  if ('or' in q && Array.isArray(q.or))
    return q.or.length === 0
      ? 'FALSE'
      : `(${q.or.map((n) => compileCatalogQuery(n, params)).join(' OR ')})`;
  if ('not' in q && q.not)
    return `(NOT coalesce(${compileCatalogQuery(q.not as CatalogQuery, params)}, FALSE))`;
  const leaf = q as Leaf;
  const parts: string[] = [];
  for (const field of Object.keys(leaf).sort() as LeafField[]) {
    const op = leaf[field];
    if (op === undefined) continue;
    switch (field) {
      case 'title':
      case 'artist':
      case 'releaseTitle':
      case 'releaseArtist': {
        const { raw, fetched } = TEXT_COLUMNS[field];
        const o = op as { contains?: string; equals?: string };
        if (o.contains !== undefined) {
          const p = params.add(likeContains(o.contains));
          parts.push(`(${raw} ILIKE ${p} OR ${fetched} ILIKE ${p})`);
        } else {
          const p = params.add(o.equals);
          parts.push(`(lower(${raw}) = lower(${p}) OR lower(${fetched}) = lower(${p}))`);
        }
        break;
      }
      case 'isrc': {
        const v = (op as { equals: string }).equals.replace(/[\s\-_.]/g, '').toUpperCase();
        parts.push(`md.isrc = ${params.add(v)}`);
        break;
      }
      case 'state':
        parts.push(`md.state = ANY (${params.add((op as { in: string[] }).in)}::text[])`);
        break;
      case 'provider':
        parts.push(`md.provider = ANY (${params.add((op as { in: string[] }).in)}::text[])`);
        break;
      case 'earnings': {
        const o = op as { gte?: string; lte?: string };
        if (o.gte !== undefined) parts.push(`md.earnings_usd >= ${params.add(o.gte)}::numeric`);
        if (o.lte !== undefined) parts.push(`md.earnings_usd <= ${params.add(o.lte)}::numeric`);
        break;
      }
      case 'blockId':
        parts.push(`md.block_id = ANY (${params.add((op as { in: string[] }).in)}::uuid[])`);
        break;
      case 'rightsholderId':
        parts.push(`b.rightsholder_id = ANY (${params.add((op as { in: string[] }).in)}::uuid[])`);
        break;
      case 'id':
        parts.push(`md.id = ANY (${params.add((op as { in: string[] }).in)}::uuid[])`);
        break;
      case 'ignored':
        parts.push(`md.ignored = ${params.add((op as { equals: boolean }).equals)}::boolean`);
        break;
    }
  }
  return parts.length === 0 ? 'TRUE' : `(${parts.join(' AND ')})`;
}
