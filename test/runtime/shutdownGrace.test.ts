// One SIGTERM stops the service within SHUTDOWN_GRACE_MS even while a job hangs: past the grace
// period the running job is released for a retry (its attempt given back, its work directory
// removed) and the process exits 0. Before, the shutdown waited for the job for ever.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { createRightsholder, putFile } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { repoRoot } from '../setup/paths.ts';
import {
  ingestDirs,
  ingestHold,
  launcher,
  serviceEnv,
  sleep,
  until,
  waitFor,
} from './processes.ts';

const GRACE_MS = 3_000;

// the API only: the statement's job is left to the processes under test
const srv = await startTestServer(t);
const launch = launcher(t);
const hold = await ingestHold(srv.config.databaseUrl!);
t.teardown(() => hold.close());
const owner = await newOrganization(srv, 'Grace Label');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Grace Artist');
const bytes = await readFile(path.join(repoRoot, 'fixtures', 'statements', 'tunecore.csv'));

t.test(
  'a hung job: SIGTERM exits 0 after the grace period, the job is released and retried',
  async (t) => {
    await hold.hold();
    const { statementId } = await putFile(owner.client, org, artist, 'tunecore.csv', bytes);
    const worker = launch(
      ['worker'],
      serviceEnv(srv.config, { SHUTDOWN_GRACE_MS: String(GRACE_MS) }),
    );
    await waitFor(worker, /royalty engine worker running/);
    await until('the statement is held mid-ingestion (its job hangs)', hold.waiting);
    t.match(await hold.job(statementId), { locked: true, attempts: 1 });
    t.equal(ingestDirs(statementId).length, 1);

    const asked = Date.now();
    worker.child.kill('SIGTERM');
    const exit = await Promise.race([
      worker.exited,
      sleep(GRACE_MS + 10_000).then(() => 'still running'),
    ]);
    t.same(exit, { code: 0, signal: null }, 'one SIGTERM, exit 0');
    const took = Date.now() - asked;
    t.ok(
      took >= GRACE_MS && took < GRACE_MS + 5_000,
      `exited ${took} ms after the signal (grace ${GRACE_MS} ms)`,
    );
    t.match(
      worker.output(),
      /the shutdown grace period is over: releasing the running jobs for a retry/,
    );
    t.match(worker.output(), /"msg":"stopped, running jobs released"/);
    t.match(
      await hold.job(statementId),
      { locked: false, attempts: 0, due: true },
      'released for a retry, its attempt given back',
    );
    t.same(ingestDirs(statementId), [], 'its work directory removed');

    // retried by the next worker, and processed
    await hold.release();
    const next = launch(['worker'], serviceEnv(srv.config));
    await until(
      'the released statement is processed',
      async () => (await hold.status(statementId)) === 'processed',
    );
    next.child.kill('SIGTERM');
    t.same(await next.exited, { code: 0, signal: null });
    t.equal(await hold.job(statementId), undefined, 'the job is done');
  },
);
