// Reads the normalized Parquet rows of a rightsholder's processed statements and returns them
// grouped by raw spelling (ISRC, title, artist, release) per statement and currency: the input of
// a block refresh. DuckDB cannot reach the object store, so the objects are downloaded first
// into a private directory that is removed afterwards.
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { DuckDBInstance, LIST, VARCHAR, listValue } from '@duckdb/node-api';
import type { ObjectStore } from '../storage/objectStore.ts';

export interface SourceStatement {
  id: string;
  normalizedKey: string;
}

export interface SpellingRow {
  statementId: string;
  currency: string | null;
  isrc: string | null;
  isrcRaw: string | null;
  title: string | null;
  artist: string | null;
  releaseTitle: string | null;
  releaseArtist: string | null;
  rows: number;
  /** exact decimal text, the sum of royalty_earnings; null when no row has an amount */
  earnings: string | null;
  /** rows with an amount */
  amountRows: number;
}

export async function readSpellings(
  store: ObjectStore,
  organizationId: string,
  rightsholderId: string,
  statements: readonly SourceStatement[],
): Promise<SpellingRow[]> {
  if (statements.length === 0) return [];
  const dir = await mkdtemp(path.join(tmpdir(), 'catalog-block-'));
  const instance = await DuckDBInstance.create(':memory:', {
    threads: '1',
    memory_limit: '512MB',
    temp_directory: dir,
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  });
  try {
    const files: string[] = [];
    for (const s of statements) {
      const file = path.join(dir, `${s.id}.parquet`);
      await pipeline(await store.getStream(s.normalizedKey), createWriteStream(file));
      files.push(file);
    }
    const c = await instance.connect();
    try {
      // rows of another organization or rightsholder never enter, whatever a file holds
      const reader = await c.runAndReadAll(
        `SELECT CAST(statement_id AS VARCHAR), currency, isrc, isrc_raw, raw_title, raw_artist, raw_release_title, raw_release_artist,
                count(*), CAST(sum(royalty_earnings) AS VARCHAR), count(royalty_earnings)
         FROM read_parquet($1::VARCHAR[], union_by_name = true)
         WHERE CAST(organization_id AS VARCHAR) = $2 AND CAST(rightsholder_id AS VARCHAR) = $3
         GROUP BY ALL`,
        [listValue(files), organizationId, rightsholderId],
        [LIST(VARCHAR), VARCHAR, VARCHAR],
      );
      return reader.getRows().map((r) => ({
        statementId: String(r[0]),
        currency: str(r[1]),
        isrc: str(r[2]),
        isrcRaw: str(r[3]),
        title: str(r[4]),
        artist: str(r[5]),
        releaseTitle: str(r[6]),
        releaseArtist: str(r[7]),
        rows: Number(r[8]),
        earnings: str(r[9]),
        amountRows: Number(r[10]),
      }));
    } finally {
      c.closeSync();
    }
  } finally {
    instance.closeSync();
    await rm(dir, { recursive: true, force: true });
  }
}

function str(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  const s = String(v);
  return s === '' ? null : s;
}
