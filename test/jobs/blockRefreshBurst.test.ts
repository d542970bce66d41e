// A burst of statements makes one catalog block refresh per rightsholder, after its last
// statement, with the same musical details a refresh after each statement would build: the
// refresh waits while statements of its rightsholder are queued or processed
// (src/jobs/tasks/catalog_block_refresh.ts), and each statement's commit queues it again.
import t from 'tap';
import type { Task, TaskList } from 'graphile-worker';
import { BLOCK_REFRESH_TASK, refreshBlock } from '../../src/catalog/blocks.ts';
import { taskList as defaultTaskList } from '../../src/jobs/tasks.ts';
import type { Deps } from '../../src/deps.ts';
import { distrokid, waitForBlock } from '../catalog/helpers.ts';
import { startTestHandler } from '../helpers/handler.ts';
import { createRightsholder, putFile, waitForStatement } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';

t.setTimeout(600_000);

/** per rightsholder, the refreshes that rebuilt its block (a run that only waited is not one) */
const rebuilt = new Map<string, number>();
function counting(deps: Deps): TaskList {
  const tasks = defaultTaskList(deps);
  const refresh = tasks[BLOCK_REFRESH_TASK] as Task;
  const refreshedAt = async (rightsholderId: string) =>
    (
      await deps.pool.query<{ at: Date | null }>(
        'SELECT refreshed_at AS at FROM catalog_blocks WHERE rightsholder_id = $1',
        [rightsholderId],
      )
    ).rows[0]?.at?.getTime() ?? null;
  return {
    ...tasks,
    [BLOCK_REFRESH_TASK]: async (payload, helpers) => {
      const { rightsholderId } = payload as { rightsholderId: string };
      const before = await refreshedAt(rightsholderId);
      await refresh(payload, helpers);
      if ((await refreshedAt(rightsholderId)) !== before)
        rebuilt.set(rightsholderId, (rebuilt.get(rightsholderId) ?? 0) + 1);
    },
  };
}

const srv = await startTestHandler(t, { taskList: counting });
const owner = await newOrganization(srv, 'Burst Label');
const org = owner.organizationId;
const db = srv.deps.pool;

t.test(
  'a burst of statements of two rightsholders: one refresh each, after their last statement',
  async (t) => {
    const first = await createRightsholder(owner.client, org, 'Burst Artist');
    const second = await createRightsholder(owner.client, org, 'Other Artist');
    const files = [
      ...Array.from({ length: 4 }, (_, i) => ({
        rh: first,
        name: `first-${i}.tsv`,
        bytes: distrokid(
          [[`Artist ${i}`, `Song ${i}`, `USRC1240000${i}`, `${i + 1}.25`]],
          `2024-0${i + 1}`,
        ),
      })),
      ...Array.from({ length: 2 }, (_, i) => ({
        rh: second,
        name: `second-${i}.tsv`,
        bytes: distrokid([['Other', `Tune ${i}`, `GBRC1240000${i}`, '0.50']], `2024-0${i + 1}`),
      })),
    ];
    // every upload completed at once: their jobs are queued together
    const uploads = await Promise.all(
      files.map((f) => putFile(owner.client, org, f.rh, f.name, f.bytes)),
    );
    for (const u of uploads)
      t.equal(
        (await waitForStatement(owner.client, org, u.statementId, 500_000)).status,
        'processed',
      );
    const firstBlock = await waitForBlock(db, first, 4);
    const secondBlock = await waitForBlock(db, second, 2);
    t.equal(rebuilt.get(first), 1, 'one refresh of the first block for its 4 statements');
    t.equal(rebuilt.get(second), 1, 'one refresh of the second block for its 2 statements');
    const details = async (blockId: string) =>
      (
        await db.query<{ identity_key: string; row_count: number; earnings: string }>(
          'SELECT identity_key, row_count::int, earnings_usd::text AS earnings FROM musical_details WHERE block_id = $1 ORDER BY identity_key',
          [blockId],
        )
      ).rows;
    const coalesced = await details(firstBlock);
    t.equal(coalesced.length, 4, 'every statement of the burst is in the block');
    t.same(
      coalesced.map((d) => d.earnings),
      ['1.25', '2.25', '3.25', '4.25'],
    );
    // a refresh now (as one after each statement would end) builds the same block
    const again = await refreshBlock(srv.deps, org, first);
    t.match(again, { statements: 4, musicalDetails: 4, added: 0, removed: 0 });
    t.same(await details(firstBlock), coalesced);
    t.equal((await details(secondBlock)).length, 2);
  },
);

t.test('a refresh whose rightsholder has no statement in flight runs at once', async (t) => {
  const solo = await createRightsholder(owner.client, org, 'Solo Artist');
  const up = await putFile(
    owner.client,
    org,
    solo,
    'solo.tsv',
    distrokid([['Solo', 'Alone', 'USRC12400099', '9.99']]),
  );
  t.equal((await waitForStatement(owner.client, org, up.statementId, 240_000)).status, 'processed');
  await waitForBlock(db, solo, 1);
  t.equal(rebuilt.get(solo), 1);
});
