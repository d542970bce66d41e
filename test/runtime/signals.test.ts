// Signals during a shutdown, on a real process (`dist/src/main.js worker`, as npm runs it) busy with a real statement:
// a repeated signal is logged and ignored while the running job finishes; two more within a few
// seconds force an exit that releases the job for another worker (its attempt given back) and
// removes its work directory. A killed process's work directories are removed by the next
// job runner.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { removeStaleIngestDirs } from '../../src/runtime.ts';
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

// the API only: the statements' jobs are left to the processes under test
const srv = await startTestServer(t);
const launch = launcher(t);
const env = serviceEnv(srv.config);
const hold = await ingestHold(srv.config.databaseUrl!);
t.teardown(() => hold.close());
const owner = await newOrganization(srv, 'Signals Label');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Signals Artist');
const bytes = await readFile(path.join(repoRoot, 'fixtures', 'statements', 'tunecore.csv'));
const upload = async () =>
  (await putFile(owner.client, org, artist, 'tunecore.csv', bytes)).statementId;

t.test(
  'a second signal during the shutdown is logged and ignored; the running job finishes',
  async (t) => {
    await hold.hold();
    const statementId = await upload();
    const worker = launch(['worker'], env);
    await waitFor(worker, /royalty engine worker running/);
    await until('the statement is held mid-ingestion', hold.waiting);
    t.equal(ingestDirs(statementId).length, 1, 'the statement has its work directory');

    worker.child.kill('SIGINT');
    await waitFor(worker, /"signal":"SIGINT","msg":"shutting down"/);
    await sleep(400);
    worker.child.kill('SIGINT');
    await waitFor(worker, /already shutting down/);
    await sleep(500);
    t.equal(worker.child.exitCode, null, 'still running after the second signal');
    t.equal(worker.child.signalCode, null);
    t.match(await hold.job(statementId), { locked: true }, 'the job still runs');

    await hold.release();
    t.same(await worker.exited, { code: 0, signal: null }, 'exits cleanly once the job is done');
    t.match(worker.output(), /"msg":"stopped"/);
    t.equal(await hold.status(statementId), 'processed');
    t.equal(await hold.job(statementId), undefined, 'the job is done, not left locked');
    t.same(ingestDirs(statementId), [], 'no work directory left');
  },
);

t.test(
  'two more signals within a few seconds force an exit: the job is released and its work directory removed',
  async (t) => {
    await hold.hold();
    const statementId = await upload();
    const worker = launch(['worker'], env);
    await until('the statement is held mid-ingestion', hold.waiting);
    t.equal(ingestDirs(statementId).length, 1);
    t.match(await hold.job(statementId), { locked: true, attempts: 1 });

    worker.child.kill('SIGINT');
    await waitFor(worker, /shutting down/);
    await sleep(400);
    worker.child.kill('SIGINT');
    await waitFor(worker, /already shutting down/);
    await sleep(400);
    worker.child.kill('SIGINT');
    t.same(await worker.exited, { code: 130, signal: null }, 'a forced exit, 128 + SIGINT');
    t.match(worker.output(), /forced exit/);
    t.match(
      await hold.job(statementId),
      { locked: false, attempts: 0, due: true },
      'released for another worker, the attempt given back',
    );
    t.same(ingestDirs(statementId), [], 'its work directory removed');

    // another worker picks it up at once
    await hold.release();
    const next = launch(['worker'], env);
    await until(
      'the released statement is processed',
      async () => (await hold.status(statementId)) === 'processed',
    );
    next.child.kill('SIGTERM');
    t.same(await next.exited, { code: 0, signal: null });
  },
);

t.test(
  "a killed process's work directories are removed by the next job runner, others' are kept",
  async (t) => {
    const { rows } = await srv.deps.pool.query<{ id: string }>(
      `SELECT id FROM statements WHERE organization_id = $1 AND status = 'processed' LIMIT 1`,
      [org],
    );
    const done = rows[0]!.id;
    const root = path.join(tmpdir(), 'royalty-ingest');
    const left = path.join(root, `${done}-0badc0de`);
    await mkdir(left, { recursive: true });
    await writeFile(path.join(left, 'original'), 'left by a killed process');
    // a statement of another database (another service on this machine): not this runner's to judge
    const foreign = path.join(
      root,
      `00000000-0000-4000-8000-${Date.now().toString().padStart(12, '0').slice(-12)}-0badc0de`,
    );
    await mkdir(foreign, { recursive: true });
    t.teardown(() => rm(foreign, { recursive: true, force: true }));
    // a statement whose job runs now (held, locked by a live worker): kept
    await hold.hold();
    const running = await upload();
    const worker = launch(['worker'], env);
    await until('the statement is held mid-ingestion', hold.waiting);
    t.same(ingestDirs(done), [], 'the worker removed the directory left behind at its start');
    t.equal(ingestDirs(running).length, 1);
    t.equal(await removeStaleIngestDirs(srv.deps.pool), 0, 'nothing else is stale');
    t.equal(ingestDirs(running).length, 1, 'the running statement keeps its directory');
    t.equal(
      ingestDirs(foreign.slice(root.length + 1, root.length + 37)).length,
      1,
      "another database's directory is kept",
    );
    await hold.release();
    await until(
      'the statement is processed',
      async () => (await hold.status(running)) === 'processed',
    );
    worker.child.kill('SIGTERM');
    t.same(await worker.exited, { code: 0, signal: null });
  },
);

t.test(
  'under npm (npm run worker), Ctrl-C twice to the process group: the second is ignored',
  async (t) => {
    await hold.hold();
    const statementId = await upload();
    // its own process group, signalled as a whole like a terminal's foreground group
    // npm relays the signal to the service, which also gets the terminal's own: one Ctrl-C, twice
    const worker = launch(['run', '-s', 'worker'], env, ['npm'], { detached: true });
    const group = -worker.child.pid!;
    t.teardown(() => {
      try {
        process.kill(group, 'SIGKILL');
      } catch {
        // gone
      }
    });
    await waitFor(worker, /royalty engine worker running/);
    await until('the statement is held mid-ingestion', hold.waiting);
    process.kill(group, 'SIGINT');
    await waitFor(worker, /shutting down/);
    await sleep(400);
    process.kill(group, 'SIGINT');
    await waitFor(worker, /already shutting down/);
    await sleep(500);
    t.equal(worker.child.exitCode, null, 'still running');
    await hold.release();
    // npm, once its script is done, ends itself by the SIGINT it was sent, as a shell does; the
    // service under it stopped cleanly (it logs so) with its job finished
    t.same(await worker.exited, { code: null, signal: 'SIGINT' });
    t.match(worker.output(), /"msg":"stopped"/);
    t.equal(await hold.status(statementId), 'processed');
    t.equal(await hold.job(statementId), undefined);
  },
);
