// Shared by the clustering and product tests: a block built from a DistroKid statement ingested
// through the real API, waited for until its refresh and its enrichment have settled.
import type { Queryable } from '../../../src/db/pool.ts';

/** Waits until no musical detail of the block is pending or fetching, and no catalog job is queued or running. */
export async function waitForEnrichment(
  db: Queryable,
  blockId: string,
  ms = 60_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const { rows } = await db.query<{ open: number; jobs: number }>(
      `SELECT (SELECT count(*)::int FROM musical_details WHERE block_id = $1 AND state IN ('pending', 'fetching')) AS open,
              (SELECT count(*)::int FROM graphile_worker.jobs WHERE task_identifier IN ('catalog_enrich', 'catalog_block_refresh')) AS jobs`,
      [blockId],
    );
    if (rows[0]!.open === 0 && rows[0]!.jobs === 0) return;
    if (Date.now() > deadline)
      throw new Error(`enrichment of block ${blockId} not settled: ${JSON.stringify(rows[0])}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The musical detail ids of the block by identity key. */
export async function detailIds(db: Queryable, blockId: string): Promise<Record<string, string>> {
  const { rows } = await db.query<{ identity_key: string; id: string }>(
    'SELECT identity_key, id FROM musical_details WHERE block_id = $1',
    [blockId],
  );
  return Object.fromEntries(rows.map((r) => [r.identity_key, r.id]));
}
