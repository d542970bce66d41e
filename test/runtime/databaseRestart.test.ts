// PostgreSQL restarted under the service (a configured DATABASE_URL: an operator's restart, an
// upgrade, a failover) while a statement is being ingested: the interrupted job is retried and
// the statement processed with its exact sums, later uploads are processed too, and `health` is
// degraded while the database is away. Before, graphile-worker's runner stopped for good on the
// first job it could not mark failed ("Runner stopping … ECONNREFUSED": its batched completion
// never retries, graphile/worker#636): statements stayed `processing` and `uploaded` for ever
// while `health` said ok. The server here is a cluster of the test's own, never the shared one.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { canonicalDecimal } from '../helpers/decimal.ts';
import { createRightsholder, uploadFixture, waitForStatement } from '../helpers/ingest.ts';
import { TrpcClient } from '../helpers/trpc.ts';
import { repoRoot } from '../setup/paths.ts';
import { startCluster } from './cluster.ts';
import { ingestHold, launcher, sleep, until, waitFor } from './processes.ts';

/** how long the server stays down (the report: about 17 s; longer than the runner's first retries) */
const DOWN_MS = 12_000;

const cluster = await startCluster(t);
const dataDir = await mkdtemp(path.join(tmpdir(), 'royalty-db-restart-'));
t.teardown(() => rm(dataDir, { recursive: true, force: true }));
const launch = launcher(t);

const fixture = (name: string) => {
  const file = path.join(repoRoot, 'fixtures', 'statements', name);
  return {
    file,
    expected: JSON.parse(readFileSync(`${file}.expected.json`, 'utf8')) as {
      netEarningsSum: string;
      dataRecords: number;
    },
  };
};

t.test(
  'a statement interrupted by a PostgreSQL restart is retried and processed; the service goes on',
  async (t) => {
    const serve = launch(['serve'], {
      DATABASE_URL: cluster.url,
      DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'info',
      DEMO_BOOTSTRAP: 'true',
      FX_RATES_URL: '',
      WORKER_POLL_INTERVAL_MS: '100',
      THREADS_WARM: '0',
    });
    const m = await waitFor(
      serve,
      /base URL:\s+(\S+)\s+organization id:\s+(\S+)\s+API key:\s+(\S+)/,
      120_000,
    );
    const [base, org, key] = [m[1]!, m[2]!, m[3]!];
    const client = new TrpcClient(base, { 'x-api-key': key, 'x-organization-id': org });
    const health = async () =>
      (
        (await (await fetch(`${base}/trpc/health`)).json()) as {
          result: { data: { status: string; checks: Record<string, string> } };
        }
      ).result.data;
    t.match(await health(), {
      status: 'ok',
      checks: { database: 'ok', objectStore: 'ok', jobs: 'ok' },
    });
    const artist = await createRightsholder(client, org, 'Restart Artist');

    // the statement's job is held in the middle of its ingestion when the server goes down
    const hold = await ingestHold(cluster.url);
    t.teardown(() => hold.close().catch(() => {}));
    await hold.hold();
    const first = fixture('tunecore.csv');
    const { statementId } = await uploadFixture(client, org, artist, first.file);
    await until('the statement is held mid-ingestion', hold.waiting);
    await cluster.stop('fast');
    const down = Date.now();
    await until(
      'health tells the database is away',
      async () => (await health()).checks.database === 'unavailable',
      30_000,
    );
    t.match(await health(), {
      status: 'degraded',
      checks: { database: 'unavailable', objectStore: 'ok' },
    });
    await sleep(DOWN_MS - (Date.now() - down));
    await cluster.start();

    const statement = await waitForStatement(client, org, statementId, 120_000);
    t.equal(statement.status, 'processed', 'the interrupted statement is processed');
    t.equal(
      canonicalDecimal(statement.netEarnings),
      canonicalDecimal(first.expected.netEarningsSum),
      'with the exact sum',
    );
    t.equal(statement.rowCount, first.expected.dataRecords, 'every row once');

    // later uploads go through the same job runner
    const second = fixture('distrokid-legacy.tsv');
    const next = await uploadFixture(client, org, artist, second.file);
    const later = await waitForStatement(client, org, next.statementId, 60_000);
    t.equal(later.status, 'processed');
    t.equal(canonicalDecimal(later.netEarnings), canonicalDecimal(second.expected.netEarningsSum));
    t.match(await health(), {
      status: 'ok',
      checks: { database: 'ok', objectStore: 'ok', jobs: 'ok' },
    });

    serve.child.kill('SIGTERM');
    t.same(await serve.exited, { code: 0, signal: null });
  },
);
