// `npm run admin -- reprocess`: bulk reprocessing for data engineers, on a local worker or on the
// service's, with atomic replacement of each statement's rows.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { paceOf } from '../../src/cli/reprocess.ts';
import { adminInProcess } from '../helpers/cli.ts';
import { createRightsholder, uploadFixture, waitForStatement } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { repoRoot, serviceEntry } from '../setup/paths.ts';

const run = promisify(execFile);
// every case starts the command as a process of its own (seconds each on 2 cores): past tap's
// 300 s default when the machine is busy
t.setTimeout(600_000);

const srv = await startTestServer(t, { role: 'serve' });
const owner = await newOrganization(srv, 'Reprocess Label');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Reprocess Artist');
const other = await createRightsholder(owner.client, org, 'Other Artist');
const fixtures = path.join(repoRoot, 'fixtures', 'statements');
const a = await uploadFixture(owner.client, org, artist, path.join(fixtures, 'tunecore.csv'));
const b = await uploadFixture(owner.client, org, other, path.join(fixtures, 'cdbaby.txt'));
const before = [
  await waitForStatement(owner.client, org, a.statementId),
  await waitForStatement(owner.client, org, b.statementId),
];

async function admin(...args: string[]) {
  const env = {
    PATH: process.env.PATH,
    DATABASE_URL: srv.config.databaseUrl,
    S3_ENDPOINT: srv.config.s3!.endpoint,
    S3_BUCKET: srv.config.s3!.bucket,
    S3_ACCESS_KEY_ID: srv.config.s3!.accessKeyId,
    S3_SECRET_ACCESS_KEY: srv.config.s3!.secretAccessKey,
    LOG_LEVEL: 'warn',
    DATA_DIR: srv.config.dataDir,
    // the AWS SDK's Node 20 notice (docs/decisions/compiled-javascript-node-20.md) is not the
    // command's
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  try {
    const { stdout } = await run(process.execPath, [serviceEntry, 'admin', 'reprocess', ...args], {
      cwd: repoRoot,
      env,
    });
    return { code: 0, out: stdout.trim() };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout, err: e.stderr };
  }
}

/**
 * A command line refused before anything starts (no runtime, no worker), run in this process:
 * its exit code, stdout and stderr.
 */
async function refused(...args: string[]) {
  const res = await adminInProcess(srv.config.databaseUrl)('reprocess', ...args);
  return { code: res.code, out: res.stdout, err: res.stderr };
}

const version = async (id: string) =>
  (
    await srv.deps.pool.query<{ v: number }>(
      'SELECT normalized_version AS v FROM statements WHERE id = $1',
      [id],
    )
  ).rows[0]!.v;

t.test(
  'reprocesses the matching statements on a local worker and reports the counts',
  async (t) => {
    const va = await version(a.statementId);
    const vb = await version(b.statementId);
    const res = await admin('--org', org, '--rightsholder', artist, '--json');
    t.equal(res.code, 0, res.err ?? 'exit 0');
    t.same(JSON.parse(res.out), { organizationId: org, statements: 1, counts: { processed: 1 } });
    t.equal(await version(a.statementId), va + 1, 'the matching statement has a new version');
    t.equal(await version(b.statementId), vb, 'the other one is untouched');
    const after = await waitForStatement(owner.client, org, a.statementId);
    t.equal(after.netEarnings, before[0].netEarnings, 'the same rows, replaced');
  },
);

t.test('--no-wait queues for the running workers; bad arguments are usage errors', async (t) => {
  const res = await admin('--org', org, '--no-wait', '--json');
  t.equal(res.code, 0, res.err ?? 'exit 0');
  t.same(JSON.parse(res.out), { organizationId: org, statements: 2, counts: { queued: 2 } });
  for (const id of [a.statementId, b.statementId])
    t.equal((await waitForStatement(owner.client, org, id)).status, 'processed');
  t.equal((await refused('--org', 'nope')).code, 2);
  t.equal((await refused('--org', org, '--status', 'uploading')).code, 2);
  t.equal((await refused()).code, 2);
  const badDate = await refused('--org', org, '--since', '2024-02-30');
  t.equal(badDate.code, 2);
  t.match(badDate.err, /--since: must be a date \(YYYY-MM-DD\) or an ISO date-time/);
  // a date-time with its offset, as the API's date filters take it
  t.same(
    JSON.parse(
      (await admin('--org', org, '--since', '2999-01-01T00:00:00+02:00', '--no-wait', '--json'))
        .out,
    ),
    {
      organizationId: org,
      statements: 0,
      counts: { queued: 0 },
    },
  );
  const stranger = await admin('--org', '00000000-0000-4000-8000-000000000000', '--no-wait');
  t.equal(stranger.code, 2, 'a mistyped organization is not "0 statements"');
  t.match(stranger.err, /no organization with that id/);
});

t.test(
  'a filter naming nothing in the organization is refused, not "0 statements"; ids in any case',
  async (t) => {
    const stranger = await newOrganization(srv, 'Stranger Label');
    const theirs = await createRightsholder(
      stranger.client,
      stranger.organizationId,
      'Their Artist',
    );
    const nobody = '00000000-0000-4000-8000-000000000000';
    // the ids are checked against the organization once the command has started; the flags' own
    // form before anything starts
    const cases: [string[], string][] = [
      [
        ['--rightsholder', theirs],
        'admin: --rightsholder: no rightsholder with that id in the organization\n',
      ],
      [
        ['--rightsholder', nobody],
        'admin: --rightsholder: no rightsholder with that id in the organization\n',
      ],
      [
        ['--distributor', nobody],
        'admin: --distributor: no distributor with that id in the organization\n',
      ],
      [['--mapping', nobody], 'admin: --mapping: no mapping with that id in the organization\n'],
    ];
    const malformed: [string[], string][] = [
      [
        ['--status', 'processed,'],
        'admin: --status: an empty status is not one of processed, failed, needs_mapping, skipped, bad\n',
      ],
      [
        ['--status', 'Processed'],
        "admin: --status: 'Processed' is not one of processed, failed, needs_mapping, skipped, bad\n",
      ],
      [['--org', stranger.organizationId], 'admin: --org is given more than once\n'],
    ];
    const va = await version(a.statementId);
    for (const [args, message] of cases) {
      const res = await admin('--org', org, '--no-wait', ...args);
      t.same([res.code, res.out, res.err], [2, '', message], args.join(' '));
    }
    for (const [args, message] of malformed) {
      const res = await refused('--org', org, '--no-wait', ...args);
      t.same([res.code, res.out, res.err], [2, '', message], args.join(' '));
    }
    t.equal(await version(a.statementId), va, 'nothing was reprocessed');
    t.equal(
      (await waitForStatement(owner.client, org, a.statementId)).status,
      'processed',
      'nor queued',
    );
    // the statement's mapping and the organization in capitals: the answer names the stored id
    const { rows } = await srv.deps.pool.query<{ mapping_id: string }>(
      'SELECT mapping_id FROM statements WHERE id = $1',
      [a.statementId],
    );
    const res = await admin(
      '--org',
      org.toUpperCase(),
      '--mapping',
      rows[0]!.mapping_id.toUpperCase(),
      '--rightsholder',
      artist,
      '--json',
    );
    t.equal(res.code, 0, res.err ?? 'exit 0');
    t.same(JSON.parse(res.out), { organizationId: org, statements: 1, counts: { processed: 1 } });
    t.equal(await version(a.statementId), va + 1);
  },
);

t.test('a reprocess that fails leaves the previous rows in place', async (t) => {
  const { rows } = await srv.deps.pool.query<{
    object_key: string;
    normalized_key: string;
    v: number;
    net: string;
    row_count: number;
  }>(
    'SELECT object_key, normalized_key, normalized_version AS v, net_earnings::text AS net, row_count FROM statements WHERE id = $1',
    [b.statementId],
  );
  const before = rows[0]!;
  const original = await srv.deps.store.getBuffer(before.object_key);
  // its file is gone from the store: the run cannot read it
  await srv.deps.store.delete(before.object_key);
  t.teardown(() => srv.deps.store.put(before.object_key, original));
  // --no-wait only queues: it exits 0, whatever the run will end as
  const queued = await admin('--org', org, '--rightsholder', other, '--no-wait', '--json');
  t.same(
    [queued.code, JSON.parse(queued.out)],
    [0, { organizationId: org, statements: 1, counts: { queued: 1 } }],
  );
  for (
    let i = 0;
    i < 240 &&
    (
      await srv.deps.pool.query("SELECT 1 FROM statements WHERE id = $1 AND status = 'failed'", [
        b.statementId,
      ])
    ).rowCount === 0;
    i++
  ) {
    await new Promise((r) => setTimeout(r, 250));
  }
  const started = Date.now();
  const res = await admin('--org', org, '--rightsholder', other, '--json');
  // a script can tell: exit 3, the failed statements named on stderr, the JSON as ever on stdout
  t.equal(res.code, 3, 'exit 3: a statement ended failed');
  t.same(JSON.parse(res.out), { organizationId: org, statements: 1, counts: { failed: 1 } });
  t.equal(res.err, `admin: 1 of 1 statements failed: ${b.statementId} (UPLOAD_OBJECT_MISSING)\n`);
  t.ok(Date.now() - started < 60_000, 'not retried for minutes');
  // without --json: the summary on stdout, the same line on stderr, the same exit
  const human = await admin('--org', org, '--rightsholder', other);
  t.same(
    [human.code, human.out, human.err?.split('\n').filter((l) => l.startsWith('admin:'))],
    [
      3,
      'statements: 1\nfailed: 1\n',
      [`admin: 1 of 1 statements failed: ${b.statementId} (UPLOAD_OBJECT_MISSING)`],
    ],
  );
  const after = (
    await srv.deps.pool.query(
      'SELECT normalized_key, normalized_version AS v, net_earnings::text AS net, row_count, failure_code FROM statements WHERE id = $1',
      [b.statementId],
    )
  ).rows[0];
  t.same(after, {
    normalized_key: before.normalized_key,
    v: before.v,
    net: before.net,
    row_count: before.row_count,
    failure_code: 'UPLOAD_OBJECT_MISSING',
  });
  t.ok(
    await srv.deps.store.head(before.normalized_key),
    "the previous version's rows are still stored",
  );
});

t.test(
  'without --json, the progress on a pipe or log file is a line per change, the summary on stdout',
  async (t) => {
    const res = await admin('--org', org, '--rightsholder', artist);
    t.equal(res.code, 0, res.err ?? 'exit 0');
    t.equal(res.out, 'statements: 1\nprocessed: 1');
    const { stderr } = await run(
      process.execPath,
      [serviceEntry, 'admin', 'reprocess', '--org', org, '--rightsholder', artist],
      {
        cwd: repoRoot,
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: srv.config.databaseUrl,
          S3_ENDPOINT: srv.config.s3!.endpoint,
          S3_BUCKET: srv.config.s3!.bucket,
          S3_ACCESS_KEY_ID: srv.config.s3!.accessKeyId,
          S3_SECRET_ACCESS_KEY: srv.config.s3!.secretAccessKey,
          LOG_LEVEL: 'warn',
          DATA_DIR: srv.config.dataDir,
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        },
      },
    );
    t.notMatch(stderr, /\r/, 'no carriage returns');
    const lines = stderr.split('\n').filter((l) => l !== '');
    t.equal(lines.at(-1), '[##############################] 1/1  processed 1');
    t.same(
      lines.filter((l, i) => l === lines[i - 1]),
      [],
      'no line repeated',
    );
  },
);

t.test(
  'the progress line tells the rate since the follow began and the time left at it',
  async (t) => {
    const pace = paceOf(0);
    t.equal(pace(10, 90, 0), '', 'nothing settled yet: no rate');
    t.equal(pace(10, 90, 1000), '', 'the statements settled before the follow are not its rate');
    t.equal(pace(30, 70, 2000), '  10/s, 7 s left');
    t.equal(pace(40, 1960, 8000), '  3.8/s, 8 min 43 s left');
  },
);
