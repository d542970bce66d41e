// The tracks of the fixture statements, as the normalizer writes them: every distinct (file,
// raw_title, raw_artist, isrc_raw) of their normalized rows. Written once by
// fixtures/catalog/build-fixture-tracks.ts into fixtures/catalog/fixture-tracks.json, read by the
// tests that ask about them (test/catalog/enrich.offline.test.ts) and checked against the rows the
// real ingestion writes by test/analytics/fixtures.test.ts, which ingests every fixture anyway.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { repoRoot } from '../setup/paths.ts';

export interface FixtureTrack {
  file: string;
  title: string | null;
  artist: string | null;
  isrc: string | null;
}

export const fixtureTracksPath = path.join(repoRoot, 'fixtures', 'catalog', 'fixture-tracks.json');

/** The committed list, in file order, then as DuckDB's ORDER BY ALL orders a file's tracks. */
export function committedFixtureTracks(): FixtureTrack[] {
  return (JSON.parse(readFileSync(fixtureTracksPath, 'utf8')) as { tracks: FixtureTrack[] }).tracks;
}

/** The distinct tracks of one statement's normalized Parquet file. */
export async function normalizedTracks(
  duck: DuckDBConnection,
  file: string,
  parquetPath: string,
): Promise<FixtureTrack[]> {
  const rows = await duck.runAndReadAll(
    `SELECT DISTINCT raw_title, raw_artist, isrc_raw FROM read_parquet('${parquetPath.replaceAll("'", "''")}') ORDER BY ALL`,
  );
  return rows.getRows().map(([title, artist, isrc]) => ({
    file,
    title: (title as string | null) ?? null,
    artist: (artist as string | null) ?? null,
    isrc: (isrc as string | null) ?? null,
  }));
}
