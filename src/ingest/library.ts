// The shared library of mappings that ships with the service for well-known statement formats:
// one file per format in fixtures/mappings, loaded into `mappings` (and its distributors into
// `distributors`) with organization_id NULL. Loading is idempotent: a mapping is upserted by its
// library key, and gets a new revision only when its file changed.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { computeHeaderHash } from './headerHash.ts';
import { withTransaction, type Pool, type Queryable } from '../db/pool.ts';
import {
  looseHeaderKey,
  matchColumns,
  mappingFieldsSchema,
  missingRequiredFields,
  type ColumnMatch,
  type MappingFields,
} from './mappingFields.ts';
import {
  canonicalJson,
  findMappingByHeaderHash,
  mappingProblems,
  mappingsToMatch,
  type MappingRecord,
} from './mappings.ts';
import { projectPath } from '../paths.ts';
import type { AutoMapRecord } from './autoMap/record.ts';

export const libraryDir = projectPath('fixtures', 'mappings');

/** Serializes loaders of processes that boot together (and the library tests). */
const LIBRARY_LOCK = 72_100_800;

export const libraryEntrySchema = z.strictObject({
  key: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,99}$/, 'must be lower-case letters, digits and dashes'),
  distributor: z.string().trim().min(1).max(200),
  name: z.string().trim().min(1).max(200),
  headers: z.array(z.string().max(1_000)).min(1).max(1_000),
  /**
   * Other names real files give a header (`"Country / Region": ["Country/Region", "Country"]`):
   * a file that names its columns so, in any order, still matches (findMappingForHeader).
   */
  aliases: z
    .record(z.string().max(1_000), z.array(z.string().trim().min(1).max(300)).min(1).max(20))
    .optional(),
  fields: mappingFieldsSchema,
});

export interface LibraryEntry {
  key: string;
  distributor: string;
  name: string;
  headers: string[];
  aliases: Record<string, string[]>;
  fields: MappingFields;
  headerHash: string;
}

/** Problems of an entry's aliases: each names one of its headers, and no two of its names compare alike. */
function aliasProblems(entry: {
  headers: string[];
  aliases?: Record<string, string[]> | undefined;
}): string[] {
  const problems: string[] = [];
  const owner = new Map<string, string>();
  const claim = (name: string, of: string) => {
    const key = looseHeaderKey(name);
    const other = owner.get(key);
    if (other !== undefined && other !== of)
      problems.push(`aliases: "${name}" of "${of}" compares like "${other}"`);
    owner.set(key, of);
  };
  for (const h of entry.headers) if (looseHeaderKey(h) !== '') claim(h, h);
  for (const [name, list] of Object.entries(entry.aliases ?? {})) {
    const header = entry.headers.find((h) => looseHeaderKey(h) === looseHeaderKey(name));
    if (header === undefined) {
      problems.push(`aliases: "${name}" is not one of its headers`);
      continue;
    }
    for (const alias of list) claim(alias, header);
  }
  return problems;
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
      for (const issue of parsed.error.issues)
        problems.push(`${file}: ${issue.path.join('.') || '(file)'}: ${issue.message}`);
      continue;
    }
    const entry = parsed.data;
    if (`${entry.key}.json` !== file)
      problems.push(`${file}: key "${entry.key}" must equal the file name`);
    for (const p of mappingProblems(entry.headers, entry.fields, { requireComplete: true }))
      problems.push(`${file}: ${p.path}: ${p.message}`);
    for (const p of aliasProblems(entry)) problems.push(`${file}: ${p}`);
    const headerHash = computeHeaderHash(entry.headers);
    const other = byHash.get(headerHash);
    if (other) problems.push(`${file}: its headers hash like those of ${other}`);
    byHash.set(headerHash, file);
    entries.push({ ...entry, aliases: entry.aliases ?? {}, headerHash });
  }
  if (problems.length > 0)
    throw new Error(`the mapping library in ${dir} is invalid:\n${problems.join('\n')}`);
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
    await db.query(
      `UPDATE distributors SET name = $2, updated_at = clock_timestamp() WHERE id = $1 AND name <> $2`,
      [found.rows[0].id, name],
    );
    return found.rows[0].id;
  }
  const created = await db.query<{ id: string }>(
    `INSERT INTO distributors (organization_id, name) VALUES (NULL, $1) RETURNING id`,
    [name],
  );
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
    const distributorIds = await libraryDistributorIds(db, entries);
    const byKey = new Map((await libraryMappingRows(db)).map((r) => [r.library_key, r]));
    for (const entry of entries) {
      const distributorId = distributorIds.get(entry.distributor.toLowerCase())!;
      const current = byKey.get(entry.key);
      byKey.delete(entry.key);
      if (!current) {
        await insertLibraryMapping(db, entry, distributorId);
        result.inserted.push(entry.key);
      } else {
        const change = await updateLibraryMapping(db, current, entry, distributorId);
        result[change].push(entry.key);
      }
    }
    // A format dropped from the library must stop matching statements.
    for (const stale of byKey.values()) {
      await db.query('DELETE FROM mappings WHERE id = $1', [stale.id]);
      result.removed.push(stale.library_key);
    }
    return result;
  });
}

/** The id of each entry's distributor (by its lower-case name), found or created. */
async function libraryDistributorIds(
  db: Queryable,
  entries: readonly LibraryEntry[],
): Promise<Map<string, string>> {
  const distributorIds = new Map<string, string>();
  for (const entry of entries) {
    const key = entry.distributor.toLowerCase();
    if (!distributorIds.has(key))
      distributorIds.set(key, await libraryDistributorId(db, entry.distributor));
  }
  return distributorIds;
}

/** A library mapping as stored. */
interface LibraryMappingRow {
  id: string;
  library_key: string;
  name: string;
  headers: string[];
  header_hash: string;
  fields: unknown;
  aliases: unknown;
  distributor_id: string | null;
}

/** The library's mappings in the database, locked until the transaction ends. */
async function libraryMappingRows(db: Queryable): Promise<LibraryMappingRow[]> {
  const { rows } = await db.query<LibraryMappingRow>(
    `SELECT id, library_key, name, headers, header_hash, fields, aliases, distributor_id FROM mappings WHERE organization_id IS NULL FOR UPDATE`,
  );
  return rows;
}

async function insertLibraryMapping(
  db: Queryable,
  entry: LibraryEntry,
  distributorId: string,
): Promise<void> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO mappings (organization_id, distributor_id, name, headers, header_hash, fields, library_key, aliases)
     VALUES (NULL, $1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [
      distributorId,
      entry.name,
      entry.headers,
      entry.headerHash,
      JSON.stringify(entry.fields),
      entry.key,
      JSON.stringify(entry.aliases),
    ],
  );
  await writeRevision(db, rows[0]!.id);
}

/**
 * Brings a stored library mapping up to its entry: nothing when they are alike, its aliases alone
 * when only they differ, else everything with a new revision.
 */
async function updateLibraryMapping(
  db: Queryable,
  current: LibraryMappingRow,
  entry: LibraryEntry,
  distributorId: string,
): Promise<'updated' | 'unchanged'> {
  const same =
    current.name === entry.name &&
    current.header_hash === entry.headerHash &&
    canonicalJson(current.headers) === canonicalJson(entry.headers) &&
    canonicalJson(current.fields) === canonicalJson(entry.fields) &&
    current.distributor_id === distributorId;
  const sameAliases = canonicalJson(current.aliases) === canonicalJson(entry.aliases);
  if (same && sameAliases) return 'unchanged';
  if (same) {
    // other names for its columns change which files the mapping matches, not what it reads
    // from them: no revision
    await db.query(
      `UPDATE mappings SET aliases = $2, updated_at = clock_timestamp() WHERE id = $1`,
      [current.id, JSON.stringify(entry.aliases)],
    );
    return 'updated';
  }
  await db.query(
    `UPDATE mappings SET distributor_id = $2, name = $3, headers = $4, header_hash = $5, fields = $6, aliases = $7,
       revision = revision + 1, updated_at = clock_timestamp()
     WHERE id = $1`,
    [
      current.id,
      distributorId,
      entry.name,
      entry.headers,
      entry.headerHash,
      JSON.stringify(entry.fields),
      JSON.stringify(entry.aliases),
    ],
  );
  await writeRevision(db, current.id);
  return 'updated';
}

// ---------------------------------------------------------------------------------------------
// Which mapping a statement's header uses

/** Why a statement uses its mapping, as its record keeps it. */
export interface MappingMatch {
  /**
   * 'header_hash': the mapping's headers hash like the file's (DESIGN.md); 'columns': no mapping
   * has the file's header hash, and this one's columns are all in the file, in another order or
   * under another name its library entry lists (see matchColumns); 'automatic': no mapping knew
   * the layout, and this run created this one from it and proved it (src/ingest/autoMap/)
   */
  by: 'header_hash' | 'columns' | 'automatic';
  source: 'organization' | 'library';
  mappingId: string;
  libraryKey: string | null;
  revision: number;
  /** by columns: the mapping's columns the file names otherwise (mapping's name → file's header cell) */
  renamed?: Record<string, string>;
  /** by columns: the mapping's headers the file lacks, and the file's header cells it does not know */
  missing?: string[];
  extra?: string[];
  /** automatic: why each field, the statement's facts and the proof (src/ingest/autoMap/index.ts AutoMapRecord) */
  automatic?: AutoMapRecord;
}

export interface FoundMapping {
  /** the mapping, its fields reading the file's own header cells */
  mapping: MappingRecord;
  match: MappingMatch;
}

/**
 * The mapping a statement with this header uses, and why. First by header hash (DESIGN.md): the
 * organization's own mapping, else the library's. Else by columns: the organization's own mappings
 * first, then the library's (with the other names its files list for a column); the best match
 * (matchColumns' score) of the first tier that has one, when no other mapping of that tier matches
 * as well. A mapping missing a required field, or reading a column the file lacks or has twice,
 * never matches by columns.
 */
export async function findMappingForHeader(
  db: Queryable,
  organizationId: string,
  header: readonly string[],
): Promise<FoundMapping | null> {
  const exact = await findMappingByHeaderHash(db, organizationId, computeHeaderHash(header));
  if (exact) {
    return {
      mapping: exact,
      match: {
        by: 'header_hash',
        source: exact.source,
        mappingId: exact.id,
        libraryKey: exact.libraryKey,
        revision: exact.revision,
      },
    };
  }
  const candidates = (await mappingsToMatch(db, organizationId)).filter(
    (m) => missingRequiredFields(m.fields).length === 0,
  );
  for (const source of ['organization', 'library'] as const) {
    const matched: { mapping: MappingRecord; match: ColumnMatch }[] = [];
    for (const mapping of candidates) {
      if (mapping.source !== source) continue;
      const result = matchColumns(header, {
        headers: mapping.headers,
        fields: mapping.fields,
        aliases: mapping.aliases,
      });
      if ('match' in result) matched.push({ mapping, match: result.match });
    }
    if (matched.length === 0) continue;
    matched.sort((a, b) => b.match.score - a.match.score);
    const [best, second] = matched;
    if (second && second.match.score === best!.match.score) return null; // two layouts fit as well: the user decides
    const { mapping, match } = best!;
    return {
      mapping: { ...mapping, fields: match.fields },
      match: {
        by: 'columns',
        source: mapping.source,
        mappingId: mapping.id,
        libraryKey: mapping.libraryKey,
        revision: mapping.revision,
        renamed: match.renamed,
        missing: match.missing,
        extra: match.extra,
      },
    };
  }
  return null;
}
