// Statement jobs and their slots, over the real HTTP API with the real job runner: four zips of
// one organization whose members are stored (`zip -0`) or nested (a zip in a zip) once held every
// slot for good at 0 % CPU, and no organization's statements were processed any more. Here they
// are read, another organization's statement is processed meanwhile; one organization never runs
// more than INGEST_ORG_CONCURRENCY statements at once (its fifth waits while another's runs); and a
// run that never ends (a download whose stream never ends, as the stored entry's did) is stopped
// by its time budget's timer, failed with INGEST_TIME_BUDGET_EXCEEDED, and its slot given back,
// while its record shows the stage it is stuck in and since when.
import { PassThrough } from 'node:stream';
import t from 'tap';
import yazl from 'yazl';
import { BLOCK_REFRESH_TASK } from '../../src/catalog/blocks.ts';
import { statementIngestTask } from '../../src/jobs/tasks/statement_ingest.ts';
import { taskList as defaultTaskList } from '../../src/jobs/tasks.ts';
import { STATEMENT_INGEST_TASK } from '../../src/ingest/queue.ts';
import type { Deps } from '../../src/deps.ts';
import {
  createRightsholder,
  insertMapping,
  MONTHLY_USD_FIELDS,
  putFile,
  waitForStatement,
} from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import type { TrpcClient } from '../helpers/trpc.ts';

t.setTimeout(300_000);

const HEADER = ['Period', 'Track', 'ISRC', 'Qty', 'Net'];
const FIELDS = { ...MONTHLY_USD_FIELDS, rawTitle: { column: 'Track' }, isrc: { column: 'ISRC' } };
/** net 3.75, 5 units */
const CSV = Buffer.from(
  `${HEADER.join(',')}\n2024-03,Paper Boats,USAT20000001,3,1.50\n2024-03,Night Song,USAT20000002,2,2.25\n`,
);

async function zip(members: { name: string; data: Buffer; store: boolean }[]): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const m of members)
    z.addBuffer(m.data, m.name, { compress: !m.store, mtime: new Date('2024-04-01T00:00:00Z') });
  z.end();
  const parts: Buffer[] = [];
  for await (const chunk of z.outputStream) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

/**
 * The object store as the ingest job sees it: the uploads of organizations in `held` are not
 * downloaded (their jobs wait, holding their slots) until released; those in `endless` come as a
 * stream that never ends.
 */
const held = new Map<string, { release: () => void; gate: Promise<void> }>();
const endless = new Set<string>();
function hold(org: string): void {
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  held.set(org, { release, gate });
}
function withStore(deps: Deps): Deps {
  const store = Object.create(deps.store);
  store.getBody = async (key: string, opts?: { expectEtag?: string | null }) => {
    const org = /^orgs\/([^/]+)\//.exec(key)?.[1] ?? '';
    if (endless.has(org)) {
      const never = new PassThrough();
      never.write(CSV.subarray(0, 20));
      return { body: never, size: undefined };
    }
    await held.get(org)?.gate;
    return deps.store.getBody(key, opts);
  };
  return { ...deps, store };
}

async function server(env: Record<string, string>): Promise<TestServer> {
  return startTestServer(t, {
    role: 'serve',
    env: { THREADS_WARM: '1', ...env },
    // the catalog is not under test
    taskList: (deps) => ({
      ...defaultTaskList(deps),
      [STATEMENT_INGEST_TASK]: statementIngestTask(withStore(deps)),
      [BLOCK_REFRESH_TASK]: async () => {},
    }),
  });
}

async function organization(
  srv: TestServer,
  name: string,
): Promise<{ org: string; client: TrpcClient; rh: string }> {
  const owner = await newOrganization(srv, name);
  await insertMapping(srv.deps.pool, owner.organizationId, `${name} layout`, HEADER, FIELDS);
  return {
    org: owner.organizationId,
    client: owner.client,
    rh: await createRightsholder(owner.client, owner.organizationId, `${name} Artist`),
  };
}

/** The statement's record as upload.statements returns it. */
async function record(client: TrpcClient, org: string, statementId: string): Promise<any> {
  const res = await client.mutate('upload.statements', {
    organizationId: org,
    filter: { statementIds: [statementId] },
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data.items[0];
}

/** How many statement jobs of the organization are running (locked), by graphile-worker's table. */
async function running(srv: TestServer, org: string): Promise<number> {
  const { rows } = await srv.deps.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks k ON k.id = j.task_id
     WHERE k.identifier = $1 AND j.locked_at IS NOT NULL AND j.payload->>'organizationId' = $2`,
    [STATEMENT_INGEST_TASK, org],
  );
  return rows[0]!.n;
}

async function until<T>(
  what: string,
  ms: number,
  probe: () => Promise<T | undefined | false>,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

t.test(
  'four stored or nested zips of one organization hold no slot; another organization is processed meanwhile',
  async (t) => {
    const srv = await server({ WORKER_CONCURRENCY: '4' });
    const a = await organization(srv, 'Zip Label');
    const b = await organization(srv, 'Plain Label');
    const stored = await zip([{ name: 'statement.csv', data: CSV, store: true }]);
    const nested = await zip([
      {
        name: 'inner.zip',
        data: await zip([{ name: 'statement.csv', data: CSV, store: true }]),
        store: true,
      },
    ]);
    const hostile = [
      await putFile(a.client, a.org, a.rh, 'stored-1.zip', stored),
      await putFile(a.client, a.org, a.rh, 'nested-1.zip', nested),
      await putFile(a.client, a.org, a.rh, 'stored-2.zip', stored),
      await putFile(a.client, a.org, a.rh, 'nested-2.zip', nested),
    ];
    t.ok(stored.length < 2048 && nested.length < 2048, 'each is under 2 KB');
    const plain = await putFile(b.client, b.org, b.rh, 'plain.csv', CSV);
    const other = await waitForStatement(b.client, b.org, plain.statementId, 60_000);
    t.match(
      other,
      { status: 'processed', netEarnings: '3.750000000000', units: '5', keptRows: 2 },
      "the other organization's statement is processed",
    );
    for (const up of hostile) {
      const s = await waitForStatement(a.client, a.org, up.statementId, 60_000);
      t.match(
        s,
        {
          status: 'processed',
          netEarnings: '3.750000000000',
          units: '5',
          keptRows: 2,
          layout: { container: 'zip', archiveEntry: /^(statement\.csv|inner\.zip)$/ },
        },
        s.fileName,
      );
    }
  },
);

t.test(
  'one organization runs at most INGEST_ORG_CONCURRENCY statements at once, in every process; another is processed meanwhile',
  async (t) => {
    // two job runners against one database, as two worker processes would be: 2 + 2 slots, 2 per organization
    const srv = await server({ WORKER_CONCURRENCY: '2', INGEST_ORG_CONCURRENCY: '2' });
    const s3 = srv.config.s3!;
    const second = await server({
      WORKER_CONCURRENCY: '2',
      INGEST_ORG_CONCURRENCY: '2',
      DATABASE_URL: srv.config.databaseUrl!,
      S3_ENDPOINT: s3.endpoint,
      S3_BUCKET: s3.bucket,
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    });
    t.equal(second.config.databaseUrl, srv.config.databaseUrl);
    t.equal(srv.config.ingest.orgConcurrency, 2);
    const a = await organization(srv, 'Busy Label');
    const b = await organization(srv, 'Quiet Label');
    hold(a.org);
    const busy = [];
    for (let i = 0; i < 5; i++)
      busy.push(
        await putFile(
          a.client,
          a.org,
          a.rh,
          `busy-${i}.csv`,
          Buffer.concat([CSV, Buffer.from(`2024-03,Extra ${i},USAT2000010${i},1,0.00${i}\n`)]),
        ),
      );
    await until(
      'two of its statements running',
      30_000,
      async () => (await running(srv, a.org)) === 2,
    );
    const quiet = await putFile(b.client, b.org, b.rh, 'quiet.csv', CSV);
    const other = await waitForStatement(b.client, b.org, quiet.statementId, 60_000);
    t.match(
      other,
      { status: 'processed', netEarnings: '3.750000000000' },
      "the other organization's statement is processed while the first one's wait",
    );
    t.equal(
      await running(srv, a.org),
      2,
      'still two of the busy organization running, the others waiting',
    );
    const states = await Promise.all(busy.map((up) => record(a.client, a.org, up.statementId)));
    t.same(states.map((s) => s.status).sort(), [
      'processing',
      'processing',
      'uploaded',
      'uploaded',
      'uploaded',
    ]);
    for (const s of states.filter((x) => x.status === 'processing')) {
      t.equal(s.progress.stage, 'reading', 'a held run shows its stage');
      t.ok(
        s.progress.seconds >= 0 && Date.parse(s.progress.since) <= Date.now() + 1000,
        'and since when',
      );
    }
    let most = 0;
    const watching = setInterval(
      () =>
        void running(srv, a.org).then(
          (n) => (most = Math.max(most, n)),
          () => {},
        ),
      50,
    );
    held.get(a.org)!.release();
    for (const [i, up] of busy.entries()) {
      const s = await waitForStatement(a.client, a.org, up.statementId, 60_000);
      t.match(
        s,
        {
          status: 'processed',
          netEarnings: `3.75${i}000000000`,
          keptRows: 3,
          progress: { stage: null, since: null, seconds: null },
        },
        s.fileName,
      );
    }
    clearInterval(watching);
    t.ok(most <= 2, `never more than two running at once (${most})`);
    // before the first server's database goes
    await second.runtime.stop();
  },
);

t.test(
  'a run that never ends is stopped by its time budget, failed, and its slot given back',
  async (t) => {
    const srv = await server({ WORKER_CONCURRENCY: '1', INGEST_JOB_TIMEOUT_MS: '3000' });
    const a = await organization(srv, 'Stuck Label');
    endless.add(a.org);
    const first = await putFile(a.client, a.org, a.rh, 'endless-1.csv', CSV);
    const second = await putFile(a.client, a.org, a.rh, 'endless-2.csv', CSV);
    // while it hangs, its record says where and since when
    const stuck = await until('the first run reading', 30_000, async () => {
      const r = await record(a.client, a.org, first.statementId);
      return r.status === 'processing' && r.progress.seconds >= 1 ? r : undefined;
    });
    t.equal(stuck.progress.stage, 'reading');
    t.ok(
      Math.abs(Date.now() - 1000 * stuck.progress.seconds - Date.parse(stuck.progress.since)) <
        5000,
      'seconds counts from since',
    );
    const started = Date.now();
    const failed = await waitForStatement(a.client, a.org, first.statementId, 30_000);
    t.match(failed, {
      status: 'failed',
      failureReason: { errorCode: 'INGEST_TIME_BUDGET_EXCEEDED', message: /time budget \(3 s\)/ },
      progress: { stage: null },
    });
    // one slot only: the second statement runs once the first has given it back, and meets the same end
    const next = await waitForStatement(a.client, a.org, second.statementId, 30_000);
    t.match(next, {
      status: 'failed',
      failureReason: { errorCode: 'INGEST_TIME_BUDGET_EXCEEDED' },
    });
    t.ok(Date.now() - started < 15_000, 'the slot was given back at once');
    // the statement is failed a moment before graphile-worker marks its job done (batched completion)
    const jobsLeft = async () =>
      (
        await srv.deps.pool.query(
          `SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = $1`,
          [STATEMENT_INGEST_TASK],
        )
      ).rows[0].n;
    for (let i = 0; i < 50 && (await jobsLeft()) > 0; i++)
      await new Promise((r) => setTimeout(r, 100));
    t.equal(await jobsLeft(), 0, 'the jobs are done (a timeout is not retried)');
  },
);
