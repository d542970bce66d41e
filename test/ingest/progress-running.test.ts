// The progress of a running statement, as its record (upload.statements) shows it over the real
// API while the real job runner, normalizer thread and DuckDB process it: `done` moves between 0
// and the total while the rows are written, only upward, and is the total once processed. A run
// that fails after its rows were written (the normalizer's answer turned into a failure at the
// thread pool's door, as a thread failing at its very end would answer) leaves done below the
// total, and nothing writes to it afterwards.
import t from 'tap';
import { AppError } from '../../src/errors.ts';
import { taskList as defaultTaskList } from '../../src/jobs/tasks.ts';
import { statementIngestTask } from '../../src/jobs/tasks/statement_ingest.ts';
import { STATEMENT_INGEST_TASK } from '../../src/ingest/queue.ts';
import { BLOCK_REFRESH_TASK } from '../../src/catalog/blocks.ts';
import { progressSettings } from '../../src/ingest/pipeline.ts';
import type { Deps } from '../../src/deps.ts';
import type { NormalizeInput } from '../../src/ingest/normalizeTypes.ts';
import type { TaskOptions } from '../../src/workers/threadPool.ts';
import {
  createRightsholder,
  insertMapping,
  MONTHLY_USD_FIELDS,
  putFile,
  waitForStatement,
} from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';

t.setTimeout(300_000);

// the record is written every 100 ms here (1 s in service), so that a run of a second is seen moving
progressSettings.writeEveryMs = 100;

// the runs of statements named here fail once the real normalizer has written every row
const failing = new Set<string>();
function failingDeps(deps: Deps): Deps {
  const threads = Object.create(deps.threads);
  threads.normalize = async (input: NormalizeInput, options?: TaskOptions) => {
    const out = await deps.threads.normalize(input, options);
    if (failing.has(input.statementId)) {
      throw new AppError(
        'STATEMENT_UNREADABLE',
        'the statement could not be read as a table: failed on purpose',
      );
    }
    return out;
  };
  return { ...deps, threads };
}

const srv = await startTestServer(t, {
  role: 'serve',
  // the catalog is not under test: its refresh of a 400,000-row rightsholder (queued by the commit)
  // takes minutes on a busy machine, and would hold the test's end
  taskList: (deps) => ({
    ...defaultTaskList(deps),
    [STATEMENT_INGEST_TASK]: statementIngestTask(failingDeps(deps)),
    [BLOCK_REFRESH_TASK]: async () => {},
  }),
});
const owner = await newOrganization(srv, 'Progress Label');
const org = owner.organizationId;
const client = owner.client;
const rh = await createRightsholder(client, org, 'Progress Artist');

const HEADER = ['Period', 'Store', 'Track', 'ISRC', 'Country', 'Qty', 'Net'];
await insertMapping(srv.deps.pool, org, 'Progress layout', HEADER, {
  ...MONTHLY_USD_FIELDS,
  source: { column: 'Store' },
  rawTitle: { column: 'Track' },
  isrc: { column: 'ISRC' },
  country: { column: 'Country' },
});

const ROWS = 400_000;
/** the rows below the header: the data rows and the footer line (rowCount, the progress total) */
const TOTAL = ROWS + 1;
/** ROWS data rows (net 0.01 each: 4,000.00 in all), a preamble line and a footer total. */
function statement(): Buffer {
  const lines = ['Statement for Progress Artist', HEADER.join(',')];
  const stores = ['Spotify', 'Apple Music', 'Deezer', 'Tidal'];
  const countries = ['US', 'GB', 'DE', 'FR', 'SE'];
  for (let i = 0; i < ROWS; i++) {
    lines.push(
      `2024-03,${stores[i % 4]},Song number ${i} of a long catalog,USRC1${String(i % 10_000_000).padStart(7, '0')},${countries[i % 5]},1,0.01`,
    );
  }
  lines.push(`Total,,,,,${ROWS},${(ROWS / 100).toFixed(2)}`);
  return Buffer.from(`${lines.join('\n')}\n`);
}

/** Polls the statement's record until it settles; every progress seen on the way. */
type Seen = { status: string; done: number; total: number | null; stage: string | null };
async function watch(statementId: string): Promise<{ seen: Seen[]; item: any }> {
  const seen: Seen[] = [];
  for (const deadline = Date.now() + 180_000; Date.now() < deadline;) {
    const res = await client.mutate('upload.statements', {
      organizationId: org,
      filter: { statementIds: [statementId], includeDeleted: true },
    });
    if (!res.ok) throw new Error(JSON.stringify(res.error));
    const item = res.data.items[0];
    seen.push({
      status: item.status,
      done: item.progress.done,
      total: item.progress.total,
      stage: item.progress.stage,
    });
    if (!['uploaded', 'processing'].includes(item.status)) return { seen, item };
    await new Promise((r) => setTimeout(r, 15));
  }
  throw new Error('the statement did not settle');
}

const bytes = statement();

t.test(
  'a statement of 400,000 rows: done moves while it is written, upward only, and is the total once processed',
  async (t) => {
    const { statementId } = await putFile(client, org, rh, 'progress.csv', bytes);
    const { seen, item } = await watch(statementId);
    t.equal(item.status, 'processed');
    t.equal(item.netEarnings, '4000.000000000000');
    t.equal(item.rowCount, TOTAL);
    t.equal(item.keptRows, ROWS);
    t.same(item.progress, { done: TOTAL, total: TOTAL, stage: null, since: null, seconds: null });
    const running = seen.filter((s) => s.status === 'processing');
    const mid = running.filter((s) => s.total === TOTAL && s.done > 0 && s.done < TOTAL);
    t.ok(
      mid.length >= 1,
      `done seen strictly between 0 and the total while processing (seen: ${[...new Set(running.map((s) => s.done))].join(', ')})`,
    );
    for (const s of running) {
      t.ok(
        s.done === 0 || (s.total !== null && s.done > 0 && s.done < s.total),
        `while processing, done ${s.done} stays below the total ${s.total}`,
      );
    }
    // within an attempt done only grows (a retried attempt would start again from 0)
    const dones = seen.map((s) => s.done);
    t.ok(
      dones.every((d, i) => i === 0 || d >= dones[i - 1]! || d === 0),
      'done never goes down',
    );
    // the stages in their order, each only while processing; done moves only while writing
    const order = ['reading', 'surveying', 'writing', 'saving'];
    const stages = running.map((s) => s.stage);
    t.ok(
      stages.every((s) => s !== null && order.includes(s)),
      `a processing statement names its stage (seen: ${[...new Set(stages)].join(', ')})`,
    );
    t.ok(
      stages.every((s, i) => i === 0 || order.indexOf(s!) >= order.indexOf(stages[i - 1]!)),
      'the stages come in order',
    );
    t.ok(stages.includes('writing'), 'writing seen');
    t.ok(
      stages.includes('surveying'),
      'surveying seen (counting the rows of 400,000 takes longer than a poll)',
    );
    t.comment(`stages seen: ${[...new Set(stages)].join(', ')}`);
    t.ok(
      running.filter((s) => s.done > 0).every((s) => s.stage === 'writing' || s.stage === 'saving'),
      'rows are done only from the writing stage on',
    );
    t.ok(
      seen.filter((s) => s.status !== 'processing').every((s) => s.stage === null),
      'no stage unless processing',
    );
    // the run is over: nothing writes to its progress any more
    await new Promise((r) => setTimeout(r, 500));
    const after = await waitForStatement(client, org, statementId);
    t.same(after.progress, { done: TOTAL, total: TOTAL, stage: null, since: null, seconds: null });
    t.equal(after.updatedAt, item.updatedAt);
  },
);

t.test(
  'a run that fails after writing its rows leaves done below the total, and nothing writes it after',
  async (t) => {
    const fileName = 'progress-failing.csv';
    // the statement's id is known from upload.uploadFile, before complete queues its job
    const start = await client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: rh,
      fileName,
      size: bytes.length,
    });
    if (!start.ok) throw new Error(JSON.stringify(start.error));
    const statementId: string = start.data.statementId;
    failing.add(statementId);
    const put = await fetch(start.data.url, {
      method: 'PUT',
      headers: start.data.headers,
      body: bytes,
    });
    t.equal(put.status, 200);
    const completed = await client.mutate('upload.uploadAction', {
      organizationId: org,
      action: { type: 'complete', statementId },
    });
    if (!completed.ok) throw new Error(JSON.stringify(completed.error));

    const { seen, item } = await watch(statementId);
    t.equal(item.status, 'failed');
    t.same(item.failureReason, {
      errorCode: 'STATEMENT_UNREADABLE',
      message: 'the statement could not be read as a table: failed on purpose',
    });
    // the thread had written every row: done stays one short of the total, which only a commit reaches
    t.same(item.progress, {
      done: TOTAL - 1,
      total: TOTAL,
      stage: null,
      since: null,
      seconds: null,
    });
    t.ok(
      seen.some((s) => s.status === 'processing' && s.done > 0 && s.done < TOTAL),
      'done was seen moving',
    );
    // within an attempt done only grows (a retried attempt would start again from 0)
    const dones = seen.map((s) => s.done);
    t.ok(
      dones.every((d, i) => i === 0 || d >= dones[i - 1]! || d === 0),
      'done never goes down',
    );
    // nothing of the failed run writes afterwards
    await new Promise((r) => setTimeout(r, 500));
    const after = await waitForStatement(client, org, statementId);
    t.same(after.progress, item.progress);
    t.equal(after.updatedAt, item.updatedAt);
  },
);
