// `npm run admin -- …` against a configured DATABASE_URL: the operator's scripted commands. The
// commands run in this process (adminInProcess); a few cases run the compiled binary as the operator
// does (its output and exit codes end to end, the usage it answers before loading anything, a
// database it cannot open), and test/cli/interrupt.test.ts sends it signals.
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { adminCli, adminInProcess } from '../helpers/cli.ts';
import { startTestServer } from '../helpers/server.ts';

const srv = await startTestServer(t);

const admin = adminInProcess(srv.config.databaseUrl);
/** the compiled binary, a process of its own (seconds each on 2 cores) */
const adminProcess = adminCli(srv.config.databaseUrl);

t.test('bootstrap, then keys created, listed and deleted from the command line', async (t) => {
  const boot = await adminProcess(
    'bootstrap',
    '--email',
    'Label.Owner@Example.com',
    '--org-name',
    'Label One',
    '--json',
  );
  t.equal(boot.code, 0);
  const first = JSON.parse(boot.stdout);
  t.same(Object.keys(first).sort(), ['apiKey', 'organizationId', 'userId']);

  // the same email again: the user is reused, the organization is new
  const again = JSON.parse(
    (
      await admin(
        'bootstrap',
        '--email',
        'label.owner@example.com',
        '--org-name',
        'Label Two',
        '--json',
      )
    ).stdout,
  );
  t.equal(again.userId, first.userId);
  t.not(again.organizationId, first.organizationId);
  const me = await srv
    .client({ 'x-api-key': again.apiKey, 'x-organization-id': again.organizationId })
    .query('user.currentUser');
  t.same(
    me.ok && me.data.organizations,
    [{ id: again.organizationId, name: 'Label Two', role: 'owner' }],
    'a key sees its scope only',
  );

  const created = await admin(
    'api-key',
    'create',
    '--email',
    'label.owner@example.com',
    '--org',
    first.organizationId,
    '--patterns',
    'user.*,health',
    '--name',
    'reporting',
    '--json',
  );
  t.equal(created.code, 0);
  const key = JSON.parse(created.stdout);
  t.match(key, {
    name: 'reporting',
    patterns: ['user.*', 'health'],
    organizationIds: [first.organizationId],
    userId: first.userId,
  });
  const caller = srv.client({ 'x-api-key': key.apiKey, 'x-organization-id': first.organizationId });
  t.equal((await caller.query('user.currentUser')).ok, true);

  const listed = JSON.parse(
    (await admin('api-key', 'list', '--org', first.organizationId, '--json')).stdout,
  );
  t.same(
    listed.map((k: any) => k.name),
    ['bootstrap', 'reporting'],
  );
  t.notMatch(JSON.stringify(listed), /rk_[A-Za-z0-9_-]{43}/, 'no secret is listed');

  const deleted = await admin('api-key', 'delete', '--id', key.id, '--json');
  t.same(JSON.parse(deleted.stdout), { id: key.id, deleted: true });
  const after = await caller.query('user.currentUser');
  t.equal(!after.ok && after.error.data.errorCode, 'INVALID_API_KEY');
});

t.test('platform operators and bad arguments', async (t) => {
  const op = JSON.parse(
    (
      await admin(
        'bootstrap',
        '--email',
        'ops@example.com',
        '--org-name',
        'Ops',
        '--platform-role',
        'c2_superadmin',
        '--json',
      )
    ).stdout,
  );
  const { rows } = await srv.deps.pool.query('SELECT platform_role FROM users WHERE id = $1', [
    op.userId,
  ]);
  t.equal(rows[0].platform_role, 'c2_superadmin');

  const badRole = await admin(
    'bootstrap',
    '--email',
    'x@example.com',
    '--org-name',
    'X',
    '--platform-role',
    'god',
  );
  t.equal(badRole.code, 2);
  t.match(badRole.stderr, /--platform-role/);
  const badEmail = await admin('bootstrap', '--email', 'not-an-email', '--org-name', 'X');
  t.equal(badEmail.code, 2);
  const missing = await admin('bootstrap', '--email', 'x@example.com');
  t.match(missing.stderr, /--org-name is required/);
  const notMember = await admin(
    'api-key',
    'create',
    '--email',
    'stranger@example.com',
    '--org',
    op.organizationId,
  );
  t.equal(notMember.code, 2);
  t.match(notMember.stderr, /not a member/);
  const badPattern = await admin(
    'api-key',
    'create',
    '--email',
    'ops@example.com',
    '--org',
    op.organizationId,
    '--patterns',
    "x'; DROP TABLE users; --",
  );
  t.equal(badPattern.code, 2);
  const unknown = await adminProcess('frobnicate');
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /unknown command/);
  // a word an object literal would find (Object's constructor) is no command either
  const proto = await admin('constructor');
  t.same([proto.code, /unknown command: constructor/.test(proto.stderr)], [2, true]);
});

t.test(
  'a command takes its own options and words only, and leaves nothing behind when it refuses',
  async (t) => {
    const orgs = async () =>
      Number(
        (await srv.deps.pool.query<{ n: string }>('SELECT count(*) AS n FROM organizations'))
          .rows[0]!.n,
      );
    const before = await orgs();
    // an unquoted name: "Label" is not silently dropped from an organization named "My"
    const unquoted = await admin(
      'bootstrap',
      '--email',
      'quote@example.com',
      '--org-name',
      'My',
      'Label',
    );
    t.equal(unquoted.code, 2);
    t.match(unquoted.stderr, /unexpected argument: Label/);
    const foreign = await admin(
      'bootstrap',
      '--email',
      'quote@example.com',
      '--org-name',
      'X',
      '--kind',
      'history',
    );
    t.equal(foreign.code, 2);
    t.match(foreign.stderr, /--kind does not apply to bootstrap/);
    t.equal(await orgs(), before, 'no organization was created');

    const owner = JSON.parse(
      (await admin('bootstrap', '--email', 'keys@example.com', '--org-name', 'Keys', '--json'))
        .stdout,
    );
    const stranger = await admin(
      'api-key',
      'create',
      '--email',
      'nobody.yet@example.com',
      '--org',
      owner.organizationId,
    );
    t.equal(stranger.code, 2);
    const { rowCount } = await srv.deps.pool.query(
      "SELECT 1 FROM users WHERE email = 'nobody.yet@example.com'",
    );
    t.equal(rowCount, 0, 'a refused key creates no user');
    const blank = await admin(
      'api-key',
      'create',
      '--email',
      'keys@example.com',
      '--org',
      owner.organizationId,
      '--name',
      '  ',
    );
    t.equal(blank.code, 2);
    t.match(blank.stderr, /--name/);
    const badOrg = await admin(
      'api-key',
      'list',
      '--email',
      'nobody.yet@example.com',
      '--org',
      'not-a-uuid',
    );
    t.equal(badOrg.code, 2, 'the --org of an unknown email is checked too');
    t.match(badOrg.stderr, /--org/);
    // a mistyped address is refused like create's, not listed as a user with no keys
    const badEmail = await admin('api-key', 'list', '--email', 'keys-example.com', '--json');
    t.same(
      [badEmail.code, badEmail.stdout, badEmail.stderr],
      [2, '', 'admin: --email: Invalid email address\n'],
    );
    const spaced = await admin('api-key', 'list', '--email', ' KEYS@example.com ', '--json');
    t.same(
      JSON.parse(spaced.stdout).map((k: { organizationIds: string[] }) => k.organizationIds),
      [[owner.organizationId]],
      'an address is taken in any case, with spaces around it',
    );
    const nobody = await admin('api-key', 'list', '--email', 'nobody.yet@example.com');
    t.same(
      [nobody.code, nobody.stdout],
      [0, 'no API keys\n'],
      'an empty list says so, not a blank line',
    );
    t.equal(
      (await admin('api-key', 'list', '--email', 'nobody.yet@example.com', '--json')).stdout,
      '[]\n',
    );

    const human = await admin('api-key', 'list', '--org', owner.organizationId);
    t.match(
      human.stdout,
      /^createdAt: \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/m,
      'times are ISO 8601',
    );

    const none = await adminProcess();
    t.equal(none.code, 2);
    t.equal(none.stdout, '', 'the usage of a mistake goes to stderr');
    t.match(none.stderr, /^Usage:/);
    const help = await adminProcess('--help');
    t.equal(help.code, 0);
    t.match(help.stdout, /^Usage:/);

    const down = await adminCli(
      srv.config.databaseUrl!.replace(/\/[^/?]+(\?|$)/, '/no_such_database_here$1'),
    )('api-key', 'list');
    t.equal(down.code, 1);
    t.match(
      down.stderr,
      /^admin: cannot open the database: database "no_such_database_here" does not exist/,
    );
    t.notMatch(down.stderr, /\n\s+at /, 'no stack trace');
  },
);

t.test(
  'fx and market imports: unusable files and downloads are messages, not stack traces',
  async (t) => {
    const dir = await mkdtemp(path.join(tmpdir(), 'admin-import-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const server = createServer((_req, res) => res.writeHead(404).end()).listen(0, '127.0.0.1');
    await once(server, 'listening');
    t.teardown(() => new Promise((resolve) => server.close(resolve)));
    const missingUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/eurofxref.csv`;
    const write = async (name: string, text: string) => {
      await writeFile(path.join(dir, name), text);
      return path.join(dir, name);
    };
    const unclosed = await write('unclosed.csv', 'date,currency,rate\n2024-01-02,EUR,"0.91\n');
    const twice = await write(
      'twice.csv',
      'date,currency,rate\n2024-01-02,EUR,0.91\n2024-01-03,EUR,0.90\n2024-01-02,EUR,0.92\n',
    );
    // repeats far apart (in batches of their own when written) are found as well
    const farApart = await write(
      'far.csv',
      [
        'symbol,date,close',
        'SPOT,2024-01-02,1',
        ...Array.from({ length: 2500 }, (_, i) => `X${i},2024-01-02,1`),
        'SPOT,2024-01-02,2',
      ].join('\n'),
    );
    const symbols = await write(
      'symbols.csv',
      'symbol,name,currency,exchange\nSPOT,Spotify,USD,NYSE\n',
    );
    const cases: [string[], number, RegExp][] = [
      [['fx', 'import', '--file', dir], 2, /^admin: cannot read .*EISDIR/],
      [
        ['fx', 'import', '--file', unclosed],
        2,
        /^admin: not a readable CSV file: Quote Not Closed/,
      ],
      [
        ['fx', 'import', '--file', twice],
        2,
        /^admin: Line 4: the same date and currency as line 2/,
      ],
      [
        ['market', 'import', '--kind', 'history', '--file', farApart],
        2,
        /^admin: Line 2503: the same symbol and date as line 2/,
      ],
      [
        ['market', 'import', '--kind', 'history', '--file', unclosed],
        2,
        /^admin: not a readable CSV file/,
      ],
      [
        ['market', 'import', '--kind', 'symbols', '--file', symbols, '--symbol', 'SPOT'],
        2,
        /--symbol applies to --kind history only/,
      ],
      [['fx', 'import', '--url', missingUrl], 1, /^admin: cannot download .*HTTP 404/],
    ];
    const rates = async () =>
      (await srv.deps.pool.query('SELECT count(*)::int AS n FROM fx_rates')).rows[0].n;
    const ratesBefore = await rates();
    for (const [args, code, message] of cases) {
      const res = await admin(...args);
      t.equal(res.code, code, args.join(' '));
      t.match(res.stderr, message, args.join(' '));
      t.notMatch(res.stderr, /\n\s+at /, `${args.join(' ')}: no stack trace`);
    }
    t.equal(await rates(), ratesBefore, 'nothing half-written');
  },
);

t.test(
  'an option given twice is refused; ids are taken in any case and stored as the API answers them',
  async (t) => {
    const owner = JSON.parse(
      (await admin('bootstrap', '--email', 'twice@example.com', '--org-name', 'Twice', '--json'))
        .stdout,
    );
    const other = JSON.parse(
      (
        await admin(
          'bootstrap',
          '--email',
          'twice@example.com',
          '--org-name',
          'Twice Two',
          '--json',
        )
      ).stdout,
    );
    const keys = async () =>
      (await srv.deps.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys')).rows[0]!
        .n;
    const before = await keys();
    // parseArgs kept the last: a key for the second organization, which the operator may not have meant
    const twice = await admin(
      'api-key',
      'create',
      '--email',
      'twice@example.com',
      '--org',
      owner.organizationId,
      '--org',
      other.organizationId,
    );
    t.same([twice.code, twice.stdout], [2, '']);
    t.equal(twice.stderr, 'admin: --org is given more than once\n');
    const json = await admin('api-key', 'list', '--json', '--json');
    t.same([json.code, json.stderr], [2, 'admin: --json is given more than once\n']);
    t.equal(await keys(), before, 'no key was created');

    // an id in capitals (or with spaces around it, as pasted) names the same organization; the key's scope holds its stored form
    const created = await admin(
      'api-key',
      'create',
      '--email',
      'twice@example.com',
      '--org',
      ` ${owner.organizationId.toUpperCase()} `,
      '--json',
    );
    t.equal(created.code, 0, created.stderr);
    const key = JSON.parse(created.stdout);
    t.same(key.organizationIds, [owner.organizationId]);
    const me = await srv
      .client({ 'x-api-key': key.apiKey, 'x-organization-id': owner.organizationId })
      .query('user.currentUser');
    t.equal(me.ok, true, 'the key works for its organization');
    const listed = JSON.parse(
      (await admin('api-key', 'list', '--org', owner.organizationId.toUpperCase(), '--json'))
        .stdout,
    );
    t.same(
      listed.map((k: any) => k.id).sort(),
      [
        key.id,
        JSON.parse(
          (await admin('api-key', 'list', '--org', owner.organizationId, '--json')).stdout,
        ).find((k: any) => k.name === 'bootstrap').id,
      ].sort(),
    );
    const deleted = await admin('api-key', 'delete', '--id', key.id.toUpperCase(), '--json');
    t.same(JSON.parse(deleted.stdout), { id: key.id, deleted: true });
    const bad = await admin('api-key', 'delete', '--id', 'nope');
    t.same(
      [bad.code, bad.stderr],
      [2, 'admin: --id: must be an id (a UUID such as 3f78dfbf-47a8-4f7d-b5f2-4f35be413b3d)\n'],
    );
  },
);
