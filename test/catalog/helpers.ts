// Shared by the catalog tests: statements in the DistroKid layout the mapping library knows,
// ingested through the API, and waiting for a block refresh to settle.
import { BLOCK_REFRESH_TASK } from '../../src/catalog/blocks.ts';
import { catalogBlockRefreshTask } from '../../src/jobs/tasks/catalog_block_refresh.ts';
import type { Queryable } from '../../src/db/pool.ts';
import type { Deps } from '../../src/deps.ts';
import { statementIngestTask } from '../../src/jobs/tasks/statement_ingest.ts';
import { startTestHandler, type TestHandler } from '../helpers/handler.ts';
import { putFile, waitForStatement } from '../helpers/ingest.ts';
import type { Caller } from '../helpers/principals.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

export type DistrokidRow = [artist: string, title: string, isrc: string, earnings: string];

const HEADER = [
  'Reporting Date',
  'Sale Month',
  'Store',
  'Artist',
  'Title',
  'ISRC',
  'UPC',
  'Quantity',
  'Team Percentage',
  'Song/Album',
  'Country of Sale',
  'Songwriter Royalties Withheld',
  'Earnings (USD)',
];

/** A DistroKid statement: rows of [artist, title, isrc, earnings]. */
export function distrokid(rows: DistrokidRow[], month = '2024-02'): Buffer {
  const lines = [HEADER.join('\t')];
  for (const [artist, title, isrc, earnings] of rows) {
    lines.push(
      [
        '2024-03-11',
        month,
        'Spotify',
        artist,
        title,
        isrc,
        '',
        '10',
        '100',
        'Song',
        'US',
        '0',
        earnings,
      ].join('\t'),
    );
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

/**
 * Waits until the rightsholder's block was refreshed from exactly `statements` processed
 * statements and no refresh is queued; returns the block id.
 */
export async function waitForBlock(
  db: Queryable,
  rightsholderId: string,
  statements: number,
  ms = 240_000,
): Promise<string> {
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
    if (Date.now() > deadline)
      throw new Error(`block of ${rightsholderId} not refreshed: ${JSON.stringify(b)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A DistroKid statement of these rows for the rightsholder, ingested through the API (presigned
 * PUT, job runner); its status once settled and the rightsholder's block once refreshed from
 * `statements` statements (this one included).
 */
export async function ingestBlock(
  srv: { deps: Deps },
  caller: Caller,
  rightsholderId: string,
  fileName: string,
  rows: DistrokidRow[],
  statements = 1,
): Promise<{ statementId: string; status: string; block: string }> {
  const { statementId } = await putFile(
    caller.client,
    caller.organizationId,
    rightsholderId,
    fileName,
    distrokid(rows),
  );
  const { status } = await waitForStatement(
    caller.client,
    caller.organizationId,
    statementId,
    240_000,
  );
  return {
    statementId,
    status,
    block: await waitForBlock(srv.deps.pool, rightsholderId, statements),
  };
}

/** The catalog's jobs a test drives its enrichment beside (drainQueue): ingestion and block refreshes. */
const ingestAndRefresh = (deps: Deps) => ({
  statement_ingest: statementIngestTask(deps),
  [BLOCK_REFRESH_TASK]: catalogBlockRefreshTask(deps),
});

/** enrichmentDrivenServer at the handler: the same jobs run in this process, no HTTP. */
export function enrichmentDrivenHandler(
  t: Parameters<typeof startTestHandler>[0],
): Promise<TestHandler> {
  return startTestHandler(t, { taskList: ingestAndRefresh });
}

/** A serving test server whose catalog enrichment the test drives itself (drainQueue): only ingestion and block refreshes run as jobs. */
export function enrichmentDrivenServer(
  t: Parameters<typeof startTestServer>[0],
): Promise<TestServer> {
  return startTestServer(t, { role: 'serve', taskList: ingestAndRefresh });
}
