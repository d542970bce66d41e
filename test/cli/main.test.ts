// The service's own commands (src/main.ts) as an operator runs them: --help, arguments they do not
// take, and a start that fails (an unreachable database) answer with a message and an exit code,
// never a stack trace.
import { execFile } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import t from 'tap';
import pg from 'pg';
import { createTestDatabase, withDatabase, serverUrl } from '../helpers/db.ts';
import { repoRoot, serviceEntry } from '../setup/paths.ts';

const run = promisify(execFile);

async function main(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [serviceEntry, ...args], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

t.test('--help prints the commands; arguments a command does not take are refused', async (t) => {
  const help = await main(['--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /serve +the API and the job runner/);
  // as `npm start -- --help` passes it
  for (const role of ['serve', 'worker']) {
    const roleHelp = await main([role, '--help']);
    t.same([roleHelp.code, roleHelp.stderr], [0, ''], role);
    t.match(roleHelp.stdout, /serve +the API and the job runner/, role);
  }
  const extra = await main(['serve', '--port', '1']);
  t.same([extra.code, extra.stderr.split('\n')[0]], [2, 'serve takes no arguments: --port 1']);
  const unknown = await main(['frobnicate']);
  t.same([unknown.code, unknown.stderr.split('\n')[0]], [2, 'unknown command frobnicate']);
});

t.test('a start that fails names the problem in a line and exits 1', async (t) => {
  const missing = withDatabase(serverUrl(), `no_such_db_${process.pid}`);
  for (const role of ['api', 'migrate']) {
    const res = await main([role], {
      DATABASE_URL: missing,
      S3_ENDPOINT: 'http://127.0.0.1:1',
      S3_BUCKET: 'bkt',
      S3_ACCESS_KEY_ID: 'k',
      S3_SECRET_ACCESS_KEY: 's',
    });
    t.equal(res.code, 1, role);
    t.match(
      res.stderr,
      new RegExp(`^cannot start ${role}: database "no_such_db_${process.pid}" does not exist\\n`),
      role,
    );
    t.notMatch(res.stderr, /\n\s+at /, `${role}: no stack trace`);
  }
});

t.test(
  'a configured database or object store that cannot be reached is named as its variable',
  async (t) => {
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const path = await import('node:path');
    const dir = await mkdtemp(path.join(tmpdir(), 'royalty-main-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    // nothing listens on port 1: `connect ECONNREFUSED 127.0.0.1:1` alone names neither server
    const s3 = {
      S3_ENDPOINT: 'http://127.0.0.1:1',
      S3_BUCKET: 'bkt',
      S3_ACCESS_KEY_ID: 'k',
      S3_SECRET_ACCESS_KEY: 's',
    };
    const env = {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ANALYTICS_DIR: path.join(dir, 'analytics'),
      ...s3,
    };
    // the credentials of the URL are not repeated
    const down = await main(['worker'], {
      ...env,
      DATABASE_URL: 'postgres://ops:s3cret@127.0.0.1:1/royalty',
    });
    t.same(
      [down.code, down.stderr],
      [
        1,
        'cannot start worker: the database of DATABASE_URL (127.0.0.1:1) cannot be reached: connect ECONNREFUSED 127.0.0.1:1\n',
      ],
    );
    const socket = path.join(dir, 'no-socket-here');
    const noSocket = await main(['migrate'], {
      ...env,
      DATABASE_URL: `postgres://ops@localhost/royalty?host=${socket}`,
    });
    t.same(
      [noSocket.code, noSocket.stderr],
      [
        1,
        `cannot start migrate: the database of DATABASE_URL (${socket}) cannot be reached: connect ENOENT ${socket}/.s.PGSQL.5432\n`,
      ],
    );
    const admin = await main(['admin', 'api-key', 'list'], {
      ...env,
      DATABASE_URL: 'postgres://ops@127.0.0.1:1/royalty',
    });
    t.same(
      [admin.code, admin.stderr],
      [
        1,
        'admin: cannot open the database: the database of DATABASE_URL (127.0.0.1:1) cannot be reached: connect ECONNREFUSED 127.0.0.1:1\n',
      ],
    );

    const db = await createTestDatabase();
    t.teardown(() => db.drop());
    const store = await main(['worker'], { ...env, DATABASE_URL: db.url });
    t.same(
      [store.code, store.stderr],
      [
        1,
        'cannot start worker: the object store of S3_ENDPOINT http://127.0.0.1:1 (S3_BUCKET bkt) cannot be used: connect ECONNREFUSED 127.0.0.1:1\n',
      ],
    );
  },
);

t.test('a port in use is named before anything starts (a second npm start)', async (t) => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  const port = (taken.address() as AddressInfo).port;
  // a database that does not exist: checked first, the port is what the message names
  const missing = withDatabase(serverUrl(), `no_such_db_${process.pid}`);
  const s3 = {
    S3_ENDPOINT: 'http://127.0.0.1:1',
    S3_BUCKET: 'bkt',
    S3_ACCESS_KEY_ID: 'k',
    S3_SECRET_ACCESS_KEY: 's',
  };
  for (const role of ['serve', 'api']) {
    const res = await main([role], {
      DATABASE_URL: missing,
      ...s3,
      PORT: String(port),
      HOST: '127.0.0.1',
    });
    t.equal(res.code, 1, role);
    t.equal(
      res.stderr,
      `cannot start ${role}: port ${port} of 127.0.0.1 is in use (by another program, or another royalty engine): set PORT to a free port\n`,
      role,
    );
  }
  // a role that does not listen is not concerned
  const worker = await main(['migrate'], { DATABASE_URL: missing, ...s3, PORT: String(port) });
  t.match(worker.stderr, /^cannot start migrate: database "no_such_db_\d+" does not exist\n/);
});

t.test(
  'a database migrated by a newer version is refused, not used with a schema this one does not know',
  async (t) => {
    const db = await createTestDatabase();
    t.teardown(() => db.drop());
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query(
      `INSERT INTO schema_migrations (id, name) VALUES (999998, '999998_from_the_future')`,
    );
    const before = (await client.query('SELECT count(*)::int AS n FROM schema_migrations')).rows[0]
      .n as number;
    await client.end();
    const s3 = {
      S3_ENDPOINT: 'http://127.0.0.1:1',
      S3_BUCKET: 'bkt',
      S3_ACCESS_KEY_ID: 'k',
      S3_SECRET_ACCESS_KEY: 's',
    };
    const res = await main(['migrate'], { DATABASE_URL: db.url, ...s3 });
    t.equal(res.code, 1);
    t.equal(
      res.stderr,
      'cannot start migrate: the database was migrated by a newer version of the program (999998_from_the_future unknown to this one): run that version or a later one\n',
    );
    const after = new pg.Client({ connectionString: db.url });
    await after.connect();
    t.equal(
      (await after.query('SELECT count(*)::int AS n FROM schema_migrations')).rows[0].n,
      before,
      'nothing applied',
    );
    await after.end();
  },
);

t.test(
  'a HOST this machine does not have, and an unusable DATA_DIR or ANALYTICS_DIR, are named at start',
  async (t) => {
    const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const path = await import('node:path');
    const dir = await mkdtemp(path.join(tmpdir(), 'royalty-main-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'a file');
    await writeFile(file, 'not a directory');
    const missing = withDatabase(serverUrl(), `no_such_db_${process.pid}`);
    const db = await createTestDatabase();
    t.teardown(() => db.drop());
    const s3 = {
      S3_ENDPOINT: 'http://127.0.0.1:1',
      S3_BUCKET: 'bkt',
      S3_ACCESS_KEY_ID: 'k',
      S3_SECRET_ACCESS_KEY: 's',
    };
    const cases: [string, Record<string, string>, string][] = [
      // PORT=0 too: the port is probed on the host first
      [
        'api',
        { DATABASE_URL: missing, ...s3, PORT: '0', HOST: 'no-such-host.invalid' },
        'cannot start api: HOST no-such-host.invalid is not a name this machine resolves: set HOST to an address of this machine (127.0.0.1, 0.0.0.0)\n',
      ],
      [
        'serve',
        { DATABASE_URL: missing, ...s3, PORT: '0', HOST: '192.0.2.1' },
        'cannot start serve: HOST 192.0.2.1 is not an address of this machine: set HOST to one of its addresses (127.0.0.1, 0.0.0.0)\n',
      ],
      // the embedded database's directory
      [
        'migrate',
        { DATA_DIR: file, ...s3 },
        `cannot start migrate: DATA_DIR ${file} cannot be used: it (or a directory above it) is a file\n`,
      ],
      // the embedded store's
      [
        'worker',
        {
          DATABASE_URL: db.url,
          DATA_DIR: path.join(file, 'sub'),
          ANALYTICS_DIR: path.join(dir, 'analytics'),
        },
        `cannot start worker: DATA_DIR ${path.join(file, 'sub')} cannot be used: it (or a directory above it) is a file\n`,
      ],
      // the analytics databases', with everything else configured
      [
        'api',
        { DATABASE_URL: missing, ...s3, PORT: '0', DATA_DIR: file },
        `cannot start api: ANALYTICS_DIR (by default DATA_DIR/analytics) ${path.join(file, 'analytics')} cannot be used: it (or a directory above it) is a file\n`,
      ],
    ];
    for (const [role, env, message] of cases) {
      const res = await main([role], {
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...env,
      });
      t.same([res.code, res.stderr], [1, message], `${role} ${JSON.stringify(env)}`);
    }
  },
);
