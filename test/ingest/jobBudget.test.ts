// A statement run's time budget reaches every part of the run: the file reader's thread (pure
// JavaScript) is terminated mid-file when the budget's signal aborts, and the normalizer gets
// what is left of the budget, at whose end its thread interrupts DuckDB (a thread is never
// terminated inside DuckDB). And the order statement jobs are taken in: each organization's
// first waiting statement before anyone's second. (The job-level timer, over the real API, is in
// jobSlots.test.ts.)
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { ingestStatement } from '../../src/ingest/pipeline.ts';
import { STATEMENT_INGEST_TASK } from '../../src/ingest/queue.ts';
import { createThreadPool } from '../../src/workers/threadPool.ts';
import {
  createRightsholder,
  insertMapping,
  MONTHLY_USD_FIELDS,
  putFile,
} from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';

t.setTimeout(300_000);

const HEADER = ['Period', 'Track', 'ISRC', 'Qty', 'Net'];
const CSV = Buffer.from(
  `${HEADER.join(',')}\n2024-03,Paper Boats,USAT20000001,3,1.50\n2024-03,Night Song,USAT20000002,2,2.25\n`,
);

let root = '';
t.before(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'job-budget-'));
});
t.teardown(() => rm(root, { recursive: true, force: true }));

t.test(
  "the file reader's thread is terminated mid-file when the signal aborts, and the pool goes on",
  async (t) => {
    // a million rows: seconds of reading
    const big = path.join(root, 'big.csv');
    const out = createWriteStream(big);
    out.write(`${HEADER.join(',')}\n`);
    for (let i = 0; i < 1_000_000; i += 10_000) {
      const lines: string[] = [];
      for (let j = i; j < i + 10_000; j++)
        lines.push(`2024-03,Paper Boats ${j},USAT2${String(j).padStart(7, '0')},1,0.01`);
      out.write(`${lines.join('\n')}\n`);
    }
    await new Promise<void>((resolve, reject) =>
      out.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
    const pool = createThreadPool({
      maxThreads: 1,
      maxQueue: 8,
      idleTimeoutMs: 2000,
      maxOldGenerationMb: 512,
      warm: 0,
    });
    t.teardown(() => pool.close());
    const input = (file: string) => ({
      sourcePath: file,
      fileName: path.basename(file),
      workDir: root,
    });
    // the thread loaded first, so that the time below is the reading's
    const small = path.join(root, 'small.csv');
    await writeFile(small, CSV);
    t.match(await pool.locateTable(input(small)), { dataRecords: 2 });
    let started = Date.now();
    const whole = await pool.locateTable(input(big));
    const wholeMs = Date.now() - started;
    t.equal(whole.dataRecords, 1_000_000);
    // aborted a fifth of the way through, however fast this machine reads: it stops well before the end
    const abortAfterMs = Math.floor(wholeMs / 5);
    started = Date.now();
    await t.rejects(pool.locateTable(input(big), { signal: AbortSignal.timeout(abortAfterMs) }), {
      name: 'AppError',
      errorCode: 'WORKER_FAILED',
    });
    const abortedMs = Date.now() - started;
    t.ok(
      abortedMs < (wholeMs * 3) / 5,
      `stopped at the abort (${abortedMs} ms, asked at ${abortAfterMs} ms), not at the end (${wholeMs} ms)`,
    );
    t.match(
      await pool.locateTable(input(small)),
      { dataRecords: 2, header: HEADER },
      'a new thread reads the next file',
    );
  },
);

t.test(
  'the normalizer gets what is left of the budget: at its end DuckDB is interrupted and the statement fails',
  async (t) => {
    const srv = await startTestServer(t, { role: 'api' });
    const owner = await newOrganization(srv, 'Budget Label');
    const org = owner.organizationId;
    await insertMapping(srv.deps.pool, org, 'Budget layout', HEADER, MONTHLY_USD_FIELDS);
    const rh = await createRightsholder(owner.client, org, 'Budget Artist');
    const late = await putFile(owner.client, org, rh, 'late.csv', CSV);
    // no job runner here: the run is this call, with its budget spent already
    t.match(await ingestStatement(srv.deps, org, late.statementId, { deadline: Date.now() }), {
      status: 'failed',
    });
    const after = await owner.client.mutate('upload.statements', {
      organizationId: org,
      filter: { statementIds: [late.statementId] },
    });
    t.match(after.ok && after.data.items[0], {
      status: 'failed',
      failureReason: { errorCode: 'INGEST_TIME_BUDGET_EXCEEDED' },
      netEarnings: null,
    });
    // with time left it is processed
    const onTime = await putFile(owner.client, org, rh, 'on-time.csv', CSV);
    t.match(
      await ingestStatement(srv.deps, org, onTime.statementId, { deadline: Date.now() + 120_000 }),
      { status: 'processed' },
    );
  },
);

t.test("each organization's first waiting statement is taken before anyone's second", async (t) => {
  const srv = await startTestServer(t, { role: 'api' });
  const a = await newOrganization(srv, 'Bulk Label');
  const b = await newOrganization(srv, 'Single Label');
  const rhA = await createRightsholder(a.client, a.organizationId, 'Bulk Artist');
  const rhB = await createRightsholder(b.client, b.organizationId, 'Single Artist');
  const bulk = [];
  for (let i = 0; i < 4; i++)
    bulk.push(await putFile(a.client, a.organizationId, rhA, `bulk-${i}.csv`, CSV));
  const single = await putFile(b.client, b.organizationId, rhB, 'single.csv', CSV);
  const { rows } = await srv.deps.pool.query<{ key: string; priority: number; queue_name: string }>(
    `SELECT key, priority, queue_name FROM graphile_worker.jobs WHERE task_identifier = $1`,
    [STATEMENT_INGEST_TASK],
  );
  const of = (id: string) => rows.find((r) => r.key === `${STATEMENT_INGEST_TASK}:${id}`)!;
  t.same(
    bulk.map((u) => of(u.statementId).priority),
    [0, 1, 2, 3],
    "the bulk organization's statements wait behind each other",
  );
  t.equal(
    of(single.statementId).priority,
    0,
    "the other organization's first goes with the bulk's first",
  );
  // graphile-worker's order (priority, then run_at): the single statement before the bulk's second
  const order = [...rows].sort((x, y) => x.priority - y.priority).map((r) => r.key);
  t.ok(
    order.indexOf(`${STATEMENT_INGEST_TASK}:${single.statementId}`) <
      order.indexOf(`${STATEMENT_INGEST_TASK}:${bulk[1]!.statementId}`),
  );
  // the bulk organization's four spread over its three queues (all of WORKER_CONCURRENCY's 4
  // slots but one), its first three in different ones
  t.same(
    bulk.map((u) => of(u.statementId).queue_name),
    [0, 1, 2, 0].map((n) => `statement_ingest:${a.organizationId}:${n}`),
  );
  t.equal(of(single.statementId).queue_name, `statement_ingest:${b.organizationId}:0`);
  // the same statement queued again stays in its queue
  const before = of(bulk[0]!.statementId).queue_name;
  const again = await a.client.mutate('upload.uploadAction', {
    organizationId: a.organizationId,
    action: { type: 'reprocess', statementId: bulk[0]!.statementId },
  });
  t.match(again, { ok: true, data: { status: 'uploaded' } }, 'reprocess of a waiting statement');
  const { rows: now } = await srv.deps.pool.query<{ queue_name: string }>(
    `SELECT queue_name FROM graphile_worker.jobs WHERE key = $1`,
    [`${STATEMENT_INGEST_TASK}:${bulk[0]!.statementId}`],
  );
  t.same(
    now.map((r) => r.queue_name),
    [before],
  );
});
