// The shape both lookup tables share (lookup_sales_types, lookup_sources): an entry per
// normalized original string, its own fields, create-or-replace by key, get by id or original,
// replace by id, delete, and a searched, sorted page. Each table describes its fields once here.
import { withTransaction, type Pool, type Queryable } from '../db/pool.ts';
import { AppError, type ErrorCode } from '../errors.ts';
import { normalizeLookupKey } from './normalize.ts';
import { pagedRows } from './paging.ts';
import { likeContains, sortDirection } from '../db/sql.ts';

export type LookupEntry<F> = F & {
  id: string;
  original: string;
  originalNormalized: string;
  createdAt: string;
  updatedAt: string;
};

export interface LookupTableSpec<F> {
  table: string;
  /** each field of an entry and its column; fields named in `jsonFields` are jsonb */
  fields: { [K in keyof F & string]: string };
  jsonFields?: readonly (keyof F & string)[];
  notFound: ErrorCode;
  /** text columns a search matches (case-insensitively, anywhere) besides the original */
  searchColumns: readonly string[];
  /** sort name → ORDER BY expression */
  sorts: Record<string, string>;
}

export interface LookupListOptions<S extends string> {
  search?: string | undefined;
  statuses?: string[] | undefined;
  sortBy: S;
  sortOrder: 'asc' | 'desc';
  limit: number;
  offset: number;
}

type Row = Record<string, unknown> & {
  id: string;
  original: string;
  original_normalized: string;
  created_at: Date;
  updated_at: Date;
};

// (longer than a function should be, by its reason: it is the table's store, a closure over the spec
// whose operations are each short methods of the object it answers)
export function lookupTable<F extends object>(spec: LookupTableSpec<F>) {
  const names = Object.keys(spec.fields) as (keyof F & string)[];
  const cols = names.map((n) => spec.fields[n]);
  const isJson = (n: keyof F & string) => spec.jsonFields?.includes(n) ?? false;
  const columns = [
    'id',
    'original',
    'original_normalized',
    ...cols,
    'created_at',
    'updated_at',
  ].join(', ');
  const value = (n: keyof F & string, v: unknown) =>
    isJson(n) ? (v === undefined || v === null ? null : JSON.stringify(v)) : v;
  const cast = (n: keyof F & string, placeholder: string) =>
    isJson(n) ? `${placeholder}::jsonb` : placeholder;

  function toEntry(row: Row): LookupEntry<F> {
    const entry: Record<string, unknown> = {
      id: row.id,
      original: row.original,
      originalNormalized: row.original_normalized,
    };
    for (const n of names) entry[n] = row[spec.fields[n]] ?? null;
    entry.createdAt = row.created_at.toISOString();
    entry.updatedAt = row.updated_at.toISOString();
    return entry as LookupEntry<F>;
  }

  async function get(
    db: Queryable,
    by: { id?: string | undefined; original?: string | undefined },
  ): Promise<LookupEntry<F> | null> {
    const { rows } =
      by.id !== undefined
        ? await db.query<Row>(`SELECT ${columns} FROM ${spec.table} WHERE id = $1`, [by.id])
        : await db.query<Row>(
            `SELECT ${columns} FROM ${spec.table} WHERE original_normalized = $1`,
            [normalizeLookupKey(by.original ?? '')],
          );
    return rows[0] ? toEntry(rows[0]) : null;
  }

  /** Replaces every field of the entry. */
  async function replace(db: Queryable, id: string, fields: F): Promise<LookupEntry<F>> {
    const sets = names.map((n, i) => `${spec.fields[n]} = ${cast(n, `$${i + 2}`)}`);
    const { rows } = await db.query<Row>(
      `UPDATE ${spec.table} SET ${sets.join(', ')}, updated_at = now() WHERE id = $1 RETURNING ${columns}`,
      [id, ...names.map((n) => value(n, fields[n]))],
    );
    if (!rows[0]) throw new AppError(spec.notFound);
    return toEntry(rows[0]);
  }

  return {
    get,

    /**
     * Creates the entry, or replaces the fields of the entry with the same normalized original.
     * `keepVerified`: an existing entry with status `verified` is left as it is (resolution results
     * never overwrite what a person checked); the existing entry is returned.
     */
    async upsert(
      db: Queryable,
      original: string,
      fields: F,
      opts: { keepVerified?: boolean } = {},
    ): Promise<{ entry: LookupEntry<F>; created: boolean }> {
      const params = [
        original,
        normalizeLookupKey(original),
        ...names.map((n) => value(n, fields[n])),
      ];
      const placeholders = names.map((n, i) => cast(n, `$${i + 3}`));
      const { rows } = await db.query<Row & { created: boolean }>(
        `INSERT INTO ${spec.table} (original, original_normalized, ${cols.join(', ')})
         VALUES ($1, $2, ${placeholders.join(', ')})
         ON CONFLICT (original_normalized) DO UPDATE SET
           original = EXCLUDED.original, ${cols.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}, updated_at = now()
         WHERE NOT ($${params.length + 1} AND ${spec.table}.status = 'verified')
         RETURNING ${columns}, (xmax = 0) AS created`,
        [...params, opts.keepVerified ?? false],
      );
      if (rows[0]) return { entry: toEntry(rows[0]), created: rows[0].created };
      return { entry: (await get(db, { original }))!, created: false };
    },

    /**
     * Changes the entry under its row lock: `change` gets the entry as it is and answers every
     * field, so two updates of different fields at the same moment both hold (the second reads
     * what the first wrote). Inside one transaction, which `change` may query (e.g. to check).
     */
    async update(
      pool: Pool,
      id: string,
      change: (current: LookupEntry<F>, db: Queryable) => F | Promise<F>,
    ): Promise<LookupEntry<F>> {
      return withTransaction(pool, async (db) => {
        const { rows } = await db.query<Row>(
          `SELECT ${columns} FROM ${spec.table} WHERE id = $1 FOR UPDATE`,
          [id],
        );
        if (!rows[0]) throw new AppError(spec.notFound);
        return replace(db, id, await change(toEntry(rows[0]), db));
      });
    },

    replace,

    async remove(db: Queryable, id: string): Promise<void> {
      const { rowCount } = await db.query(`DELETE FROM ${spec.table} WHERE id = $1`, [id]);
      if (!rowCount) throw new AppError(spec.notFound);
    },

    async list<S extends string>(
      db: Queryable,
      opts: LookupListOptions<S>,
    ): Promise<{ rows: LookupEntry<F>[]; total: number }> {
      const where: string[] = [];
      const params: unknown[] = [];
      if (opts.search) {
        const key = normalizeLookupKey(opts.search);
        params.push(likeContains(opts.search));
        const matches = ['original', ...spec.searchColumns].map(
          (c) => `${c} ILIKE $${params.length}`,
        );
        // a search with no letter or digit has an empty key, which is in every key: it matches literally only
        if (key !== '') {
          params.push(likeContains(key));
          matches.push(`original_normalized LIKE $${params.length}`);
        }
        where.push(`(${matches.join(' OR ')})`);
      }
      if (opts.statuses && opts.statuses.length > 0) {
        params.push(opts.statuses);
        where.push(`status = ANY($${params.length})`);
      }
      const sort = spec.sorts[opts.sortBy];
      if (!sort) throw new AppError('VALIDATION_FAILED', `Unknown sort ${opts.sortBy}`);
      const { rows, total } = await pagedRows<Row>(db, {
        columns,
        from: spec.table,
        where,
        params,
        orderBy: `${sort} ${sortDirection(opts.sortOrder)} NULLS LAST, original_normalized, id`,
        limit: opts.limit,
        offset: opts.offset,
      });
      return { rows: rows.map(toEntry), total };
    },
  };
}
