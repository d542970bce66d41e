// The trimmed and standardized variants of a statement are made on first request rather than by
// every ingestion run: they re-read the whole file, and most statements are never downloaded in
// those forms. They are made by the pipeline's own code (locate, then the normalizer's variant
// writer) for the version the statement has now, and dropped when it is reprocessed.
// Two variants each run records are written on first request too, as most are never downloaded:
// the `single` copy of a decoded text upload (a BOM, another encoding), which the reader makes
// again from the same upload and encoding (writeSingle), and a removed-rows file with nothing in
// it, its header alone (writeEmptyRemoved). Their keys are recorded, listed and deleted as before.
import { type LocatedTable, tableOf } from './fileTypes.ts';
import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AppError } from '../errors.ts';
import type { Queryable } from '../db/pool.ts';
import type { Deps } from '../deps.ts';
import { deleteObjects } from '../storage/objectStore.ts';
import { mappingFieldsSchema } from './mappingFields.ts';
import { emptyRemovedCsv } from './normalizeTypes.ts';
import { locateStatementFile, removedLeftForRequest, upload } from './pipeline.ts';

export const lazyVariants = ['trimmed', 'standardized'] as const;
export type LazyVariant = (typeof lazyVariants)[number];

export interface StoredVariants {
  /** the object key of each variant made so far, by variant name */
  variants: Record<string, string>;
  /** how the original was read (its delimiter and format); null until a run located it */
  located: { delimiter?: string; format?: string } | null;
}

/** The variants a statement has now and how its original was located. */
export async function storedVariantsOf(
  db: Queryable,
  statementId: string,
): Promise<StoredVariants> {
  const { rows } = await db.query<StoredVariants>(
    'SELECT variants, located FROM statements WHERE id = $1',
    [statementId],
  );
  return rows[0]!;
}

interface StatementRecord {
  organization_id: string;
  object_key: string;
  file_name: string;
  status: string;
  normalized_version: number;
  variables: Record<string, string>;
  object_etag: string | null;
  encoding: string | null;
  fields: unknown;
  single: string | null;
  removed: string | null;
  removed_rows: number | null;
  headers: string[] | null;
  layout: Pick<LocatedTable, 'format' | 'container' | 'headerLine'> | null;
}

/** What the variants are made from: the statement's record, its mapping's fields, its recorded keys. */
async function statementRecord(
  deps: Deps,
  statementId: string,
  variant: string,
): Promise<StatementRecord> {
  const { rows } = await deps.pool.query<StatementRecord>(
    `SELECT s.organization_id, s.object_key, s.file_name, s.status, s.normalized_version, s.variables, s.object_etag, s.encoding, m.fields,
       s.variants->>'single' AS single, s.variants->>'removed' AS removed, s.removed_rows, s.headers, s.located AS layout
     FROM statements s LEFT JOIN mappings m ON m.id = s.mapping_id WHERE s.id = $1`,
    [statementId],
  );
  if (!rows[0])
    throw new AppError(
      'FILE_VARIANT_NOT_FOUND',
      `The statement has no ${variant} file (it is not processed)`,
    );
  return rows[0];
}

/** Runs `work` in a directory of its own, removed after. */
async function inWorkDir<T>(statementId: string, work: (dir: string) => Promise<T>): Promise<T> {
  const workDir = path.join(
    tmpdir(),
    'royalty-variant',
    `${statementId}-${randomBytes(4).toString('hex')}`,
  );
  await mkdir(workDir, { recursive: true });
  try {
    return await work(workDir);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

const reprocessedMeanwhile = () =>
  new AppError(
    'STATEMENT_STATE_CONFLICT',
    'The statement was reprocessed while its file was being prepared; ask again',
  );

/**
 * The key of a variant whose object is there to be read: a lazy one made now when it has none, a
 * `single` one recorded by its run written now when it is not there yet; undefined when the
 * statement has no such variant.
 */
export async function variantToRead(
  deps: Deps,
  statementId: string,
  variant: string,
  key: string | undefined,
): Promise<string | undefined> {
  if (!key)
    return (lazyVariants as readonly string[]).includes(variant)
      ? materializeVariant(deps, statementId, variant as LazyVariant)
      : undefined;
  if ((variant === 'single' || variant === 'removed') && !(await deps.store.head(key)))
    await writeRecorded(deps, statementId, variant, key, (s) =>
      variant === 'single'
        ? writeSingle(deps, statementId, s, key)
        : writeEmptyRemoved(deps, s, key),
    );
  return key;
}

/**
 * Writes, under the key its run recorded, a variant the run left to be written on first request:
 * while the statement is processed again the key is still the one its record names, as the object
 * was before; once reprocessed (the key is no longer the statement's), the object goes again, as
 * that run's drop of the previous version's objects may have passed.
 */
async function writeRecorded(
  deps: Deps,
  statementId: string,
  variant: 'single' | 'removed',
  key: string,
  write: (s: StatementRecord) => Promise<void>,
): Promise<void> {
  const s = await statementRecord(deps, statementId, variant);
  if (s[variant] !== key) throw reprocessedMeanwhile();
  await write(s);
  if ((await statementRecord(deps, statementId, variant))[variant] !== key) {
    await deleteObjects(deps.store, [key], deps.log);
    throw reprocessedMeanwhile();
  }
}

/**
 * A removed-rows file with nothing removed: its header alone (a file with rows is written by its
 * run: one missing is not made up).
 */
async function writeEmptyRemoved(deps: Deps, s: StatementRecord, key: string): Promise<void> {
  if (!s.headers || !s.layout || !removedLeftForRequest(s.layout, s.removed_rows)) return;
  await deps.store.put(key, Buffer.from(emptyRemovedCsv(s.headers.length)), 'text/csv');
}

/** The `single` object: the table as the reader reads it again from the upload, with its encoding. */
async function writeSingle(
  deps: Deps,
  statementId: string,
  s: StatementRecord,
  key: string,
): Promise<void> {
  await inWorkDir(statementId, async (workDir) => {
    const { located, sourcePath } = await locateStatementFile(
      deps,
      s.object_key,
      s.file_name,
      workDir,
      { expectEtag: s.object_etag, encoding: s.encoding },
    );
    if (located.csvPath === sourcePath)
      throw new Error(`statement ${statementId}: its upload reads as it is, with no single copy`);
    await upload(deps, key, located.csvPath, 'text/csv');
  });
}

export async function materializeVariant(
  deps: Deps,
  statementId: string,
  variant: LazyVariant,
): Promise<string> {
  const s = await statementRecord(deps, statementId, variant);
  const fields = mappingFieldsSchema.safeParse(s.fields);
  if (s.status !== 'processed' || !fields.success)
    throw new AppError(
      'FILE_VARIANT_NOT_FOUND',
      `The statement has no ${variant} file (it is not processed)`,
    );
  return inWorkDir(statementId, async (workDir) => {
    const { located } = await locateStatementFile(deps, s.object_key, s.file_name, workDir, {
      expectEtag: s.object_etag,
      encoding: s.encoding,
    });
    const file = path.join(workDir, `${variant}.csv`);
    await deps.threads.normalize({
      ...tableOf(located),
      fields: fields.data,
      fileName: s.file_name,
      variables: s.variables,
      statementId,
      organizationId: s.organization_id,
      rightsholderId: '00000000-0000-0000-0000-000000000000',
      outPath: null,
      removedPath: null,
      trimmedPath: variant === 'trimmed' ? file : null,
      standardizedPath: variant === 'standardized' ? file : null,
      variantsOnly: true,
      threads: 2,
      timeBudgetMs: 30 * 60_000,
    });
    const key = `orgs/${s.organization_id}/statements/${statementId}/${variant}/v${s.normalized_version}.csv`;
    await upload(deps, key, file, 'text/csv');
    // recorded only if the statement was not reprocessed meanwhile
    const updated = await deps.pool.query(
      `UPDATE statements SET variants = variants || jsonb_build_object($2::text, $3::text) WHERE id = $1 AND normalized_version = $4`,
      [statementId, variant, key, s.normalized_version],
    );
    if (!updated.rowCount) {
      await deleteObjects(deps.store, [key], deps.log);
      throw reprocessedMeanwhile();
    }
    return key;
  });
}
