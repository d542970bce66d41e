// Vector entries (name, category, embedding) for similarity search over known source names. An
// entry's embedding is computed when it is written; entries embedded by another model (or seeded
// without one) are embedded again before they are compared.
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import type { Embedder } from '../ai/embedding.ts';
import { normalizeLookupKey } from './normalize.ts';
import { pagedRows } from './paging.ts';
import { likeContains } from '../db/sql.ts';

export interface VectorEntry {
  id: string;
  name: string;
  category: string;
  embeddingModel: string | null;
  dimensions: number | null;
  embedding?: number[] | null;
  createdAt: string;
  updatedAt: string;
}

interface Row {
  id: string;
  name: string;
  category: string;
  embedding: number[] | null;
  embedding_model: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, name, category, embedding, embedding_model, created_at, updated_at';

function toEntry(row: Row, withEmbedding: boolean): VectorEntry {
  return {
    id: row.id,
    name: row.name,
    category: row.category,
    embeddingModel: row.embedding_model,
    dimensions: row.embedding?.length ?? null,
    ...(withEmbedding ? { embedding: row.embedding } : {}),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === '23505';
}

export async function createVectorEntry(
  db: Queryable,
  embedder: Embedder,
  name: string,
  category: string,
): Promise<VectorEntry> {
  const [embedding] = await embedder.embed([name]);
  try {
    const { rows } = await db.query<Row>(
      `INSERT INTO source_vectors (name, name_normalized, category, embedding, embedding_model)
       VALUES ($1, $2, $3, $4::real[], $5) RETURNING ${COLUMNS}`,
      [name, normalizeLookupKey(name), category, embedding, embedder.model],
    );
    return toEntry(rows[0]!, true);
  } catch (error) {
    if (isUniqueViolation(error))
      throw new AppError('RAG_ENTRY_EXISTS', undefined, { cause: error });
    throw error;
  }
}

export async function updateVectorEntry(
  db: Queryable,
  embedder: Embedder,
  id: string,
  name: string,
  category: string,
): Promise<VectorEntry> {
  const [embedding] = await embedder.embed([name]);
  try {
    const { rows } = await db.query<Row>(
      `UPDATE source_vectors SET name = $2, name_normalized = $3, category = $4, embedding = $5::real[], embedding_model = $6, updated_at = now()
       WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, name, normalizeLookupKey(name), category, embedding, embedder.model],
    );
    if (!rows[0]) throw new AppError('RAG_ENTRY_NOT_FOUND');
    return toEntry(rows[0], true);
  } catch (error) {
    if (isUniqueViolation(error))
      throw new AppError('RAG_ENTRY_EXISTS', undefined, { cause: error });
    throw error;
  }
}

export async function deleteVectorEntry(db: Queryable, id: string): Promise<void> {
  const { rowCount } = await db.query('DELETE FROM source_vectors WHERE id = $1', [id]);
  if (!rowCount) throw new AppError('RAG_ENTRY_NOT_FOUND');
}

export async function listVectorEntries(
  db: Queryable,
  opts: {
    search?: string | undefined;
    category?: string | undefined;
    includeEmbedding: boolean;
    sortOrder: 'asc' | 'desc';
    limit: number;
    offset: number;
  },
): Promise<{ rows: VectorEntry[]; total: number }> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (opts.search) {
    params.push(likeContains(opts.search));
    where.push(`(name ILIKE $${params.length} OR category ILIKE $${params.length})`);
  }
  if (opts.category) {
    params.push(opts.category);
    where.push(`category = $${params.length}`);
  }
  const { rows, total } = await pagedRows<Row>(db, {
    columns: COLUMNS,
    from: 'source_vectors',
    where,
    params,
    orderBy:
      opts.sortOrder === 'desc'
        ? 'name_normalized DESC, category DESC, id DESC'
        : 'name_normalized, category, id',
    limit: opts.limit,
    offset: opts.offset,
  });
  return { rows: rows.map((r) => toEntry(r, opts.includeEmbedding)), total };
}

/** Embeds the entries that have no embedding of the embedder's model. */
export async function ensureEmbeddings(db: Queryable, embedder: Embedder): Promise<number> {
  const { rows } = await db.query<{ id: string; name: string }>(
    'SELECT id, name FROM source_vectors WHERE embedding IS NULL OR embedding_model IS DISTINCT FROM $1 ORDER BY id',
    [embedder.model],
  );
  for (let i = 0; i < rows.length; i += 100) {
    const chunk = rows.slice(i, i + 100);
    const embeddings = await embedder.embed(chunk.map((r) => r.name));
    await db.query(
      `UPDATE source_vectors v
       SET embedding = ARRAY(SELECT x::real FROM jsonb_array_elements_text(e.value) WITH ORDINALITY AS t(x, k) ORDER BY k),
           embedding_model = $3, updated_at = now()
       FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e(value, n)
       JOIN unnest($1::uuid[]) WITH ORDINALITY AS i(id, n) USING (n)
       WHERE v.id = i.id`,
      [chunk.map((r) => r.id), JSON.stringify(embeddings), embedder.model],
    );
  }
  return rows.length;
}

export interface EmbeddedEntry {
  id: string;
  name: string;
  category: string;
  embedding: number[];
}

export async function embeddedEntries(db: Queryable, embedder: Embedder): Promise<EmbeddedEntry[]> {
  await ensureEmbeddings(db, embedder);
  const { rows } = await db.query<{
    id: string;
    name: string;
    category: string;
    embedding: number[];
  }>(
    'SELECT id, name, category, embedding FROM source_vectors WHERE embedding_model = $1 AND embedding IS NOT NULL',
    [embedder.model],
  );
  return rows;
}
