// A statement file through the file reader and the normalizer, as the pipeline runs them (in this
// thread), for the tests of the normalizer and of the statement's flags.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { tableOf, type LocatedTable } from '../../src/ingest/fileTypes.ts';
import {
  normalizeStatement,
  type NormalizeInput,
  type NormalizeOutput,
} from '../../workers/normalize.ts';
import { locateTable } from '../../workers/statementFile.ts';

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** The normalizer's input for a located table, writing normalized.parquet and removed.csv into `dir`. */
export function normalizeInput(
  located: LocatedTable,
  mapping: Record<string, unknown>,
  dir: string,
  extra: Partial<NormalizeInput> = {},
): NormalizeInput {
  return {
    ...tableOf(located),
    fields: mapping as NormalizeInput['fields'],
    fileName: 'statement.tsv',
    variables: {},
    statementId: '00000000-0000-4000-8000-000000000001',
    organizationId: '00000000-0000-4000-8000-000000000002',
    rightsholderId: '00000000-0000-4000-8000-000000000003',
    outPath: path.join(dir, 'normalized.parquet'),
    removedPath: path.join(dir, 'removed.csv'),
    ...extra,
  };
}

/** A temporary directory removed when the test ends. */
export async function workDir(t: Teardown, prefix = 'royalty-normalize-'): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Locates and normalizes a statement's bytes; the located table, the output and where its Parquet is. */
export async function normalizeFile(
  t: Teardown,
  content: string | Buffer,
  mapping: Record<string, unknown>,
  options: { fileName?: string; extra?: Partial<NormalizeInput> } = {},
): Promise<{ located: LocatedTable; out: NormalizeOutput; outPath: string }> {
  const fileName = options.fileName ?? 'statement.tsv';
  const dir = await workDir(t);
  const file = path.join(dir, 'original');
  await writeFile(file, content);
  const located = await locateTable({ sourcePath: file, fileName, workDir: dir });
  if (!located.ok) throw new Error(`${located.errorCode}: ${located.message}`);
  const out = await normalizeStatement(
    normalizeInput(located, mapping, dir, { fileName, ...options.extra }),
  );
  if (!out.ok) throw new Error(out.message);
  return { located, out, outPath: path.join(dir, 'normalized.parquet') };
}

/** Columns of a normalized Parquet file, in source-row order, as JSON values. */
export async function parquetRows(outPath: string, columns: string): Promise<unknown[][]> {
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  try {
    return (
      await duck.runAndReadAll(
        `SELECT ${columns} FROM read_parquet('${outPath}') ORDER BY source_row`,
      )
    ).getRowsJson() as unknown[][];
  } finally {
    duck.closeSync();
  }
}
