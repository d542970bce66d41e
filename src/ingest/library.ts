// The shared library of mappings that ships with the service for well-known statement formats:
// one file per format in fixtures/mappings, loaded into `mappings` (and its distributors into
// `distributors`) with organization_id NULL. Loading is idempotent: a mapping is upserted by its
// library key, and gets a new revision only when its file changed.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { computeHeaderHash } from '../../workers/headerHash.ts';
import { withTransaction, type Pool, type Queryable } from '../db/pool.ts';
import { mappingFieldsSchema, type MappingFields } from './fields.ts';
import { canonicalJson, mappingProblems } from './mappings.ts';

export const libraryDir = fileURLToPath(new URL('../../fixtures/mappings/', import.meta.url));

/** Serializes loaders of processes that boot together (and the library tests). */
const LIBRARY_LOCK = 72_100_800;

export const libraryEntrySchema = z.strictObject({
  key: z.string().regex(/^[a-z0-9][a-z0-9-]{0,99}$/, 'must be lower-case letters, digits and dashes'),
  distributor: z.string().trim().min(1).max(200),
  name: z.string().trim().min(1).max(200),
  headers: z.array(z.string().max(1_000)).min(1).max(1_000),
  fields: mappingFieldsSchema,
});

export interface LibraryEntry {
  key: string;
  distributor: string;
  name: string;
  headers: string[];
  fields: MappingFields;
  headerHash: string;
}

/**
 * Reads and checks every library file. All problems of all files are collected and reported at
 * once: a broken library must stop the service at start, not fail one statement later.
 */
export async function loadMappingLibrary(dir = libraryDir): Promise<LibraryEntry[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
  const problems: string[] = [];
  const entries: LibraryEntry[] = [];
  const byHash = new Map<string, string>();
  for (const file of files) {
    let raw: unknown;
    try {
      raw = JSON.parse(await readFile(path.join(dir, file), 'utf8'));
    } catch (error) {
      problems.push(`${file}: not JSON (${(error as Error).message})`);
      continue;
    }
    const parsed = libraryEntrySchema.safeParse(raw);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) problems.push(`${file}: ${issue.path.join('.') || '(file)'}: ${issue.message}`);
      continue;
    }
    const entry = parsed.data;
    if (`${entry.key}.json` !== file) problems.push(`${file}: key "${entry.key}" must equal the file name`);
    for (const p of mappingProblems(entry.headers, entry.fields, { requireComplete: true })) problems.push(`${file}: ${p.path}: ${p.message}`);
    const headerHash = computeHeaderHash(entry.headers);
    const other = byHash.get(headerHash);
    if (other) problems.push(`${file}: its headers hash like those of ${other}`);
    byHash.set(headerHash, file);
    entries.push({ ...entry, headerHash });
  }
  if (problems.length > 0) throw new Error(`the mapping library in ${dir} is invalid:\n${problems.join('\n')}`);
  return entries;
}

export interface LibrarySyncResult {
  inserted: string[];
  updated: string[];
  unchanged: string[];
  /** library mappings whose file is gone: removed (statements keep their data and revision) */
  removed: string[];
}

async function libraryDistributorId(db: Queryable, name: string): Promise<string> {
  const found = await db.query<{ id: string }>(
    `SELECT id FROM distributors WHERE organization_id IS NULL AND lower(btrim(name)) = lower(btrim($1))`,
    [name],
  );
  if (found.rows[0]) {
    await db.query(`UPDATE distributors SET name = $2, updated_at = clock_timestamp() WHERE id = $1 AND name <> $2`, [found.rows[0].id, name]);
    return found.rows[0].id;
  }
  const created = await db.query<{ id: string }>(`INSERT INTO distributors (organization_id, name) VALUES (NULL, $1) RETURNING id`, [name]);
  return created.rows[0]!.id;
}

async function writeRevision(db: Queryable, mappingId: string): Promise<void> {
  await db.query(
    `INSERT INTO mapping_revisions (mapping_id, revision, name, headers, header_hash, fields, file_categories, distributor_id, changed_by)
     SELECT id, revision, name, headers, header_hash, fields, file_categories, distributor_id, NULL FROM mappings WHERE id = $1`,
    [mappingId],
  );
}

/** Loads the library files into the database; safe to run at every start and concurrently. */
export async function syncMappingLibrary(pool: Pool, dir = libraryDir): Promise<LibrarySyncResult> {
  const entries = await loadMappingLibrary(dir);
  return withTransaction(pool, async (db) => {
    await db.query('SELECT pg_advisory_xact_lock($1)', [LIBRARY_LOCK]);
    const result: LibrarySyncResult = { inserted: [], updated: [], unchanged: [], removed: [] };
    const distributorIds = new Map<string, string>();
    for (const entry of entries) {
      const key = entry.distributor.toLowerCase();
      if (!distributorIds.has(key)) distributorIds.set(key, await libraryDistributorId(db, entry.distributor));
    }
    const { rows: existing } = await db.query<{
      id: string;
      library_key: string;
      name: string;
      headers: string[];
      header_hash: string;
      fields: unknown;
      distributor_id: string | null;
    }>(`SELECT id, library_key, name, headers, header_hash, fields, distributor_id FROM mappings WHERE organization_id IS NULL FOR UPDATE`);
    const byKey = new Map(existing.map((r) => [r.library_key, r]));
    for (const entry of entries) {
      const distributorId = distributorIds.get(entry.distributor.toLowerCase())!;
      const current = byKey.get(entry.key);
      byKey.delete(entry.key);
      if (!current) {
        const { rows } = await db.query<{ id: string }>(
          `INSERT INTO mappings (organization_id, distributor_id, name, headers, header_hash, fields, library_key)
           VALUES (NULL, $1, $2, $3, $4, $5, $6) RETURNING id`,
          [distributorId, entry.name, entry.headers, entry.headerHash, JSON.stringify(entry.fields), entry.key],
        );
        await writeRevision(db, rows[0]!.id);
        result.inserted.push(entry.key);
        continue;
      }
      const same =
        current.name === entry.name &&
        current.header_hash === entry.headerHash &&
        canonicalJson(current.headers) === canonicalJson(entry.headers) &&
        canonicalJson(current.fields) === canonicalJson(entry.fields) &&
        current.distributor_id === distributorId;
      if (same) {
        result.unchanged.push(entry.key);
        continue;
      }
      await db.query(
        `UPDATE mappings SET distributor_id = $2, name = $3, headers = $4, header_hash = $5, fields = $6,
           revision = revision + 1, updated_at = clock_timestamp()
         WHERE id = $1`,
        [current.id, distributorId, entry.name, entry.headers, entry.headerHash, JSON.stringify(entry.fields)],
      );
      await writeRevision(db, current.id);
      result.updated.push(entry.key);
    }
    // A format dropped from the library must stop matching statements.
    for (const stale of byKey.values()) {
      await db.query('DELETE FROM mappings WHERE id = $1', [stale.id]);
      result.removed.push(stale.library_key);
    }
    return result;
  });
}
