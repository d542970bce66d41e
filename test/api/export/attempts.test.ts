// Two attempts of one export at once: the dead-runner recovery (src/jobs/liveness.ts) can take a
// live but slow runner for dead and hand its job to another. Both attempts then really run
// (real PostgreSQL, s3rver, DuckDB); the first to complete wins, and nothing the other one writes,
// before or after, may change or remove the winner's files. Each attempt writes under a prefix of
// its own; the loser removes what it wrote.
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import t, { type Test } from 'tap';
import { buildExport } from '../../../src/exports/run.ts';
import { exportBuildTask } from '../../../src/jobs/tasks/export_build.ts';
import type { Deps } from '../../../src/deps.ts';
import { seedDataset } from '../../analytics/dataset.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { downloadAll, readTable, records, sha256 } from './helpers.ts';

const srv = await startTestHandler(t, { env: { EXPORT_PART_ROWS: '3' } });
const owner = await newOrganization(srv, 'Two Attempts Org');
const org = owner.organizationId;
const ds = await seedDataset(srv, org);
const both = [ds.rh1, ds.rh2];

async function objectsUnder(prefix: string): Promise<string[]> {
  const res = await srv.deps.store.client.send(
    new ListObjectsV2Command({ Bucket: srv.deps.store.bucket, Prefix: prefix }),
  );
  return (res.Contents ?? []).map((o) => o.Key!).sort();
}

async function trigger(type: string, format: string): Promise<string> {
  const res = await owner.client.mutateUnchecked('export.trigger', {
    organizationId: org,
    type,
    format,
    rightsholderIds: both,
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data.exportId as string;
}

/**
 * Holds the next upload (a runner stalled mid-upload) until `open`; later uploads pass. The store
 * itself is the service's own (one analytics engine and store per service, as in production).
 */
function holdNextUpload(t: Test) {
  let open!: (failure?: Error) => void;
  const opened = new Promise<Error | undefined>((r) => (open = r));
  let reached!: () => void;
  const waiting = new Promise<void>((r) => (reached = r));
  const store = srv.deps.store;
  const put = store.put;
  let held = false;
  store.put = async (...args: Parameters<Deps['store']['put']>) => {
    if (!held) {
      held = true;
      reached();
      const failure = await opened;
      if (failure) throw failure;
    }
    return put.apply(store, args);
  };
  t.teardown(() => {
    delete (store as { put?: unknown }).put;
  });
  return { open, waiting };
}

const rename = async (id: string, name: string) => {
  const res = await owner.client.mutate('rightsholder.updateById', {
    organizationId: org,
    id,
    name,
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
};

async function verified(exportId: string) {
  const files = await downloadAll(owner.client, org, exportId);
  for (const f of files)
    if (sha256(f.bytes) !== f.file.sha256)
      throw new Error(`${f.file.fileName}: the stored object is not the listed file`);
  return records(await Promise.all(files.map((f) => readTable('csv', f.bytes))));
}

t.test(
  'a stalled attempt that wakes after another completed neither overwrites nor removes its files',
  async (t) => {
    const id = await trigger('royalty_lines', 'csv');
    const g = holdNextUpload(t);
    // attempt 1 reads the data, writes part 1 and stalls before uploading it
    const slow = buildExport(srv.deps, id).then(
      (r) => ({ ok: true as const, r }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    await g.waiting;
    // meanwhile the data changes, and attempt 2 (the job handed to another runner) completes
    await rename(ds.rh1, 'Artist One Renamed');
    await rename(ds.rh2, 'Artist Two Renamed');
    t.equal(await buildExport(srv.deps, id), 'completed');
    const status = (
      await owner.client.query('export.status', { organizationId: org, exportId: id })
    ).data;
    t.match(status, { status: 'completed', rowCount: 7, fileCount: 3 });
    const listed = (
      await owner.client.query('export.listFiles', { organizationId: org, exportId: id })
    ).data.files;
    const before = await verified(id);
    t.same([...new Set(before.map((r) => r.rightsholder_name))].sort(), [
      'Artist One Renamed',
      'Artist Two Renamed',
    ]);
    const winnerObjects = await objectsUnder(`orgs/${org}/exports/${id}/`);
    t.equal(winnerObjects.length, 3);
    // attempt 1 wakes up and goes on with its stale part 1
    g.open();
    const outcome = await slow;
    t.same(
      outcome,
      { ok: true, r: 'skipped' },
      'the late attempt ends quietly: the export is completed',
    );
    t.same(
      (await owner.client.query('export.listFiles', { organizationId: org, exportId: id })).data
        .files,
      listed,
      'the files listed are the same',
    );
    const after = await verified(id);
    t.same(after, before, "every object is the winner's, byte for byte");
    t.same(
      await objectsUnder(`orgs/${org}/exports/${id}/`),
      winnerObjects,
      'the late attempt left no object behind',
    );
    t.match(
      (await owner.client.query('export.status', { organizationId: org, exportId: id })).data,
      { status: 'completed', rowCount: 7, fileCount: 3 },
    );
    await rename(ds.rh1, 'Artist One');
    await rename(ds.rh2, 'Artist Two');
  },
);

t.test(
  'the first attempt to complete wins; the later one, still uploading, loses and removes its objects',
  async (t) => {
    const id = await trigger('earnings_summary', 'parquet');
    const g = holdNextUpload(t);
    // attempt 1 stalls at its first upload; attempt 2 claims the export and completes first
    const first = buildExport(srv.deps, id);
    await g.waiting;
    const second = await buildExport(srv.deps, id);
    t.equal(second, 'completed');
    const files = (
      await owner.client.query('export.listFiles', { organizationId: org, exportId: id })
    ).data.files;
    g.open();
    t.equal(await first, 'skipped');
    t.same(
      (await owner.client.query('export.listFiles', { organizationId: org, exportId: id })).data
        .files,
      files,
    );
    const downloaded = await downloadAll(owner.client, org, id);
    t.ok(
      downloaded.every((d) => sha256(d.bytes) === d.file.sha256),
      'every listed file is intact',
    );
    t.equal(
      (await objectsUnder(`orgs/${org}/exports/${id}/`)).length,
      files.length,
      'only the listed files are stored',
    );
    const { rows } = await srv.deps.pool.query<{ action: string }>(
      `SELECT action FROM activity_events WHERE subject_type = 'export' AND subject_id = $1 ORDER BY id`,
      [id],
    );
    t.same(
      rows.map((r) => r.action).filter((a) => a !== 'export.downloadFile'),
      ['export.trigger', 'export.completed'],
      'completed once',
    );
  },
);

t.test(
  "a late attempt's failure neither requeues, fails nor empties the export another attempt completed",
  async (t) => {
    for (const attempts of [1, 3]) {
      const id = await trigger('royalty_lines', 'csv');
      const g = holdNextUpload(t);
      // the graphile-worker task, as the runner calls it; attempt 3 of 3 is the job's last
      const helpers = {
        logger: { info() {}, error() {}, warn() {}, debug() {} },
        job: { attempts, max_attempts: 3 },
      } as never;
      const slow = Promise.resolve(
        exportBuildTask(srv.deps)({ organizationId: org, exportId: id }, helpers),
      ).then(
        () => 'returned',
        (error: Error) => error.message,
      );
      await Promise.race([
        g.waiting,
        slow.then((r) => {
          throw new Error(`the attempt ended before its first upload: ${r}`);
        }),
      ]);
      t.equal(await buildExport(srv.deps, id), 'completed');
      const files = (
        await owner.client.query('export.listFiles', { organizationId: org, exportId: id })
      ).data.files;
      const before = await verified(id);
      // the stalled attempt's upload fails: a retryable failure of a job that is not the export's any more
      g.open(new Error('connection reset by the object store'));
      t.equal(
        await slow,
        'connection reset by the object store',
        'the task throws the error for graphile-worker',
      );
      t.match(
        (await owner.client.query('export.status', { organizationId: org, exportId: id })).data,
        { status: 'completed', rowCount: 7, errorCode: null },
      );
      t.same(
        (await owner.client.query('export.listFiles', { organizationId: org, exportId: id })).data
          .files,
        files,
      );
      t.same(await verified(id), before);
      t.equal((await objectsUnder(`orgs/${org}/exports/${id}/`)).length, files.length);
    }
  },
);

t.test(
  'an earlier attempt failing while a later one runs leaves the export to the later one',
  async (t) => {
    const id = await trigger('earnings_summary', 'csv');
    const g = holdNextUpload(t);
    const helpers = {
      logger: { info() {}, error() {}, warn() {}, debug() {} },
      job: { attempts: 3, max_attempts: 3 },
    } as never;
    const first = Promise.resolve(
      exportBuildTask(srv.deps)({ organizationId: org, exportId: id }, helpers),
    ).then(
      () => 'returned',
      (error: Error) => error.message,
    );
    await g.waiting;
    // attempt 2 claims the export (it is the latest now), then attempt 1, on the job's last try, fails
    const g2 = holdNextUpload(t);
    const second = buildExport(srv.deps, id);
    await g2.waiting;
    g.open(new Error('disk full'));
    t.equal(await first, 'disk full');
    t.match(
      (await owner.client.query('export.status', { organizationId: org, exportId: id })).data,
      { status: 'running', errorCode: null },
      'not failed, not queued',
    );
    g2.open();
    t.equal(await second, 'completed');
    t.match(
      (await owner.client.query('export.status', { organizationId: org, exportId: id })).data,
      { status: 'completed', errorCode: null },
    );
    const downloaded = await downloadAll(owner.client, org, id);
    t.ok(downloaded.length > 0 && downloaded.every((d) => sha256(d.bytes) === d.file.sha256));
    t.same(
      await objectsUnder(`orgs/${org}/exports/${id}/attempt-1/`),
      [],
      "the failed attempt's objects are gone",
    );
    t.equal((await objectsUnder(`orgs/${org}/exports/${id}/`)).length, downloaded.length);
  },
);

t.test(
  'two attempts started together: one completes, the files are whole, no object is left over',
  async (t) => {
    for (const format of ['csv', 'xlsx', 'parquet']) {
      const id = await trigger('royalty_lines', format);
      const results = await Promise.all([buildExport(srv.deps, id), buildExport(srv.deps, id)]);
      t.ok(results.includes('completed'), `${format}: ${results.join(', ')}`);
      const status = (
        await owner.client.query('export.status', { organizationId: org, exportId: id })
      ).data;
      t.match(status, { status: 'completed', rowCount: 7, fileCount: 3 }, format);
      const downloaded = await downloadAll(owner.client, org, id);
      t.ok(
        downloaded.every((d) => sha256(d.bytes) === d.file.sha256),
        `${format}: every listed file is intact`,
      );
      const rows = records(await Promise.all(downloaded.map((d) => readTable(format, d.bytes))));
      t.equal(rows.length, 7);
      t.equal(
        (await objectsUnder(`orgs/${org}/exports/${id}/`)).length,
        3,
        `${format}: only the listed files are stored`,
      );
    }
  },
);

t.test(
  "a failed clean-up after the winner's commit leaves the winner's files in place",
  async (t) => {
    const id = await trigger('earnings_summary', 'csv');
    // a stray object of a crashed attempt, which the completion removes after its commit
    await srv.deps.store.put(`orgs/${org}/exports/${id}/attempt-7/stray.csv`, 'partial');
    const client = srv.deps.store.client;
    const send = client.send;
    let failures = 0;
    (client as { send: unknown }).send = async function (
      this: unknown,
      command: { constructor: { name: string } },
      ...rest: unknown[]
    ) {
      if (command.constructor.name === 'DeleteObjectCommand' && failures === 0) {
        failures++;
        throw new Error('the object store is unavailable');
      }
      return (send as (...a: unknown[]) => Promise<unknown>).call(client, command, ...rest);
    };
    t.teardown(() => {
      delete (client as { send?: unknown }).send;
    });
    t.equal(await buildExport(srv.deps, id), 'completed');
    t.equal(failures, 1);
    t.match(
      (await owner.client.query('export.status', { organizationId: org, exportId: id })).data,
      { status: 'completed' },
    );
    const downloaded = await downloadAll(owner.client, org, id);
    t.ok(
      downloaded.length > 0 && downloaded.every((d) => sha256(d.bytes) === d.file.sha256),
      'every listed file is there, intact',
    );
  },
);
