// Shared by the catalog tests: statements in the DistroKid layout the mapping library knows, and
// waiting for a block refresh to settle.
import type { Queryable } from '../../src/db/pool.ts';

const HEADER = [
  'Reporting Date', 'Sale Month', 'Store', 'Artist', 'Title', 'ISRC', 'UPC', 'Quantity', 'Team Percentage', 'Song/Album',
  'Country of Sale', 'Songwriter Royalties Withheld', 'Earnings (USD)',
];

/** A DistroKid statement: rows of [artist, title, isrc, earnings]. */
export function distrokid(rows: [string, string, string, string][], month = '2024-02'): Buffer {
  const lines = [HEADER.join('\t')];
  for (const [artist, title, isrc, earnings] of rows) {
    lines.push(['2024-03-11', month, 'Spotify', artist, title, isrc, '', '10', '100', 'Song', 'US', '0', earnings].join('\t'));
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

/**
 * Waits until the rightsholder's block was refreshed from exactly `statements` processed
 * statements and no refresh is queued; returns the block id.
 */
export async function waitForBlock(db: Queryable, rightsholderId: string, statements: number, ms = 240_000): Promise<string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const { rows } = await db.query<{ id: string; state: string; n: number; queued: boolean }>(
      `SELECT b.id, b.state, (SELECT count(*) FROM jsonb_object_keys(b.source_versions))::int AS n,
         EXISTS (SELECT 1 FROM graphile_worker.jobs j WHERE j.key = 'catalog_block_refresh:' || b.rightsholder_id::text) AS queued
       FROM catalog_blocks b WHERE b.rightsholder_id = $1`,
      [rightsholderId],
    );
    const b = rows[0];
    if (b && b.state === 'idle' && b.n === statements && !b.queued) return b.id;
    if (Date.now() > deadline) throw new Error(`block of ${rightsholderId} not refreshed: ${JSON.stringify(b)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The task list of a server whose catalog enrichment the test drives itself (drainQueue). */
export { statementIngestTask } from '../../src/jobs/statementIngest.ts';
