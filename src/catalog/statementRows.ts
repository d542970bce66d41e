// The normalized rows of a rightsholder's processed statements, grouped by raw spelling (ISRC,
// title, artist, release) per statement and currency: the input of a block refresh. They are read
// from the organization's analytics database (src/analytics/store.ts), which holds every processed
// statement's rows and loads only the statements that changed since its last use, instead of
// downloading every statement's Parquet object on each refresh.
import { LIST, VARCHAR, listValue } from '@duckdb/node-api';
import { analyticsFor } from '../analytics/engine.ts';
import { semantic } from '../analytics/semantic.ts';
import type { Deps } from '../deps.ts';

const FACTS = semantic.model.facts.table;

export interface SourceStatement {
  id: string;
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
  deps: Deps,
  organizationId: string,
  rightsholderId: string,
  statements: readonly SourceStatement[],
): Promise<SpellingRow[]> {
  if (statements.length === 0) return [];
  // the facts alone: the catalog table is the block's before this refresh, which is about to
  // change it; building it now would be undone by the refresh, and built again by the next query
  const facts = await analyticsFor(deps).freshFacts(organizationId, undefined, { catalog: false });
  const ids = listValue(statements.map((s) => s.id));
  return facts.withConnection(async (c) => {
    // a statement whose rows the analytics database could not load (an unreadable object, or one
    // replaced since the list was read) fails the refresh, which graphile-worker retries
    const loaded = Number(
      (
        await c.runAndReadAll(
          `SELECT count(*) FROM loaded WHERE statement_id IN (SELECT unnest($1::VARCHAR[]))`,
          [ids],
          [LIST(VARCHAR)],
        )
      ).getRows()[0]![0],
    );
    if (loaded < statements.length) {
      throw new Error(
        `the normalized rows of ${statements.length - loaded} of the rightsholder's statements could not be read; the refresh is retried`,
      );
    }
    const reader = await c.runAndReadAll(
      `SELECT statement_id, currency, isrc, isrc_raw, raw_title, raw_artist, raw_release_title, raw_release_artist,
              count(*), CAST(sum(royalty_earnings) AS VARCHAR), count(royalty_earnings)
       FROM ${FACTS} WHERE rightsholder_id = $1 AND statement_id IN (SELECT unnest($2::VARCHAR[]))
       GROUP BY ALL`,
      [rightsholderId, ids],
      [VARCHAR, LIST(VARCHAR)],
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
  });
}

function str(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  const s = String(v);
  return s === '' ? null : s;
}
