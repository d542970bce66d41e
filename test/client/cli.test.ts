// The command-line client against a running service, as a subprocess: a login by the device flow
// approved through the real pages, uploads of three fixture statements with their exact sums, a
// duplicate refused, an analytics query and an export compared with cube.query, --json and --csv
// output, exit codes, API-key credentials, and two processes refreshing one login at once.
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import t from 'tap';
import { setPassword } from '../../src/oauth/passwords.ts';
import { canonicalDecimal } from '../helpers/decimal.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { Browser, formOf, signInAndAllow } from '../oauth/browser.ts';
import { sumDecimals } from '../api/export/helpers.ts';
import { repoRoot } from '../setup/paths.ts';
import { royalty, start } from './run.ts';

const srv = await startTestServer(t, { role: 'serve' });
const PASSWORD = 'a long enough password';
const owner = await newOrganization(srv, 'Command Line Org');
await setPassword(srv.deps.pool, owner.email, PASSWORD);
const org = owner.organizationId;
const configDir = await mkdtemp(path.join(tmpdir(), 'royalty-cli-'));
t.teardown(() => rm(configDir, { recursive: true, force: true }));
const env = { ROYALTY_URL: srv.url, ROYALTY_CONFIG_DIR: configDir };
const apiKeyEnv = {
  ROYALTY_URL: srv.url,
  ROYALTY_API_KEY: owner.apiKey,
  ROYALTY_ORGANIZATION_ID: org,
  ROYALTY_CONFIG_DIR: configDir,
};
const fixture = (name: string) => path.join(repoRoot, 'fixtures', 'statements', name);
const FIXTURES = ['tunecore.csv', 'distrokid-legacy.tsv', 'cargo-royalty_extended.csv'];
const expected = async (name: string) =>
  JSON.parse(await readFile(`${fixture(name)}.expected.json`, 'utf8')) as {
    netEarningsSum: string;
    dataRecords: number;
  };

/** Approves a device code as the person does: the code page, the confirmation, sign-in, consent. */
async function approve(verificationUri: string, userCode: string): Promise<void> {
  const browser = new Browser(srv.url);
  const codeForm = formOf((await browser.go(verificationUri)).html, '/device');
  const confirm = await browser.go(codeForm.action, {
    form: { ...codeForm.fields, user_code: userCode },
  });
  const confirmForm = formOf(confirm.html, '/device');
  const login = await browser.go(confirmForm.action, {
    form: { ...confirmForm.fields, confirm: 'yes' },
  });
  const loginForm = formOf(login.html, '/login');
  const consent = await browser.go(loginForm.action, {
    form: { ...loginForm.fields, email: owner.email, password: PASSWORD },
  });
  const allow = formOf(consent.html, '/consent');
  const done = await browser.go(allow.action, { form: { ...allow.fields, decision: 'allow' } });
  if (!/Device connected/.test(done.html))
    throw new Error(`the approval did not finish: ${done.status} ${done.html}`);
}

const configFile = path.join(configDir, 'config.json');

t.test(
  'login by the device flow stores the tokens 0600; auth status and whoami use them',
  async (t) => {
    const login = start(env, ['login']);
    const prompt = await login.stderrMatch(/open (\S+) and enter the code ([A-Z]{4}-[A-Z]{4})/);
    t.equal(prompt[1], `${srv.url}/api/oauth/device`);
    await approve(prompt[1]!, prompt[2]!);
    const result = await login.done;
    t.equal(result.code, 0, result.stderr);
    t.match(
      result.stderr,
      new RegExp(`Logged in to ${srv.url} as ${owner.email}, organization Command Line Org`),
    );
    t.equal((await stat(configFile)).mode & 0o777, 0o600);
    const stored = JSON.parse(await readFile(configFile, 'utf8'));
    t.equal(stored.profiles.default.organizationId, org);
    t.type(stored.profiles.default.tokens.refreshToken, 'string');

    const status = await royalty(env, 'auth', 'status', '--json');
    t.equal(status.code, 0, status.stderr);
    t.match(JSON.parse(status.stdout), {
      server: srv.url,
      credentials: 'login (profile default)',
      email: owner.email,
      organizationId: org,
      role: 'owner',
    });
    const whoami = await royalty(env, 'whoami', '--json');
    t.same(JSON.parse(whoami.stdout), {
      id: owner.userId,
      email: owner.email,
      organizations: [{ id: org, name: 'Command Line Org', role: 'owner' }],
    });
  },
);

t.test('login --web: PKCE with a loopback redirect, in a profile of its own', async (t) => {
  const login = start(env, ['login', '--web', '--profile', 'browser']);
  const [, address] = await login.stderrMatch(/Sign in at (\S+)\n/);
  const authorize = new URL(address!);
  t.equal(authorize.origin + authorize.pathname, `${srv.url}/api/oauth/authorize`);
  t.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
  t.match(authorize.searchParams.get('redirect_uri'), /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
  const callback = await signInAndAllow(new Browser(srv.url), authorize, owner.email, PASSWORD);
  t.equal(callback.origin + callback.pathname, authorize.searchParams.get('redirect_uri'));
  const page = await fetch(callback);
  t.equal(page.status, 200);
  const result = await login.done;
  t.equal(result.code, 0, result.stderr);
  const stored = JSON.parse(await readFile(configFile, 'utf8'));
  t.same(Object.keys(stored.profiles).sort(), ['browser', 'default']);
  t.not(stored.profiles.browser.tokens.refreshToken, stored.profiles.default.tokens.refreshToken);
  const whoami = await royalty(env, 'whoami', '--json', '--profile', 'browser');
  t.equal(JSON.parse(whoami.stdout).email, owner.email);
  const unknown = await royalty(env, 'whoami', '--profile', 'nobody');
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /Not logged in \(profile nobody\)/);
});

t.test('two processes with an expired access token refresh it once between them', async (t) => {
  const stored = JSON.parse(await readFile(configFile, 'utf8'));
  const before = stored.profiles.default.tokens;
  stored.profiles.default.tokens.expiresAt = Date.now() - 1000;
  await writeFile(configFile, JSON.stringify(stored), { mode: 0o600 });
  const [a, b] = await Promise.all([
    royalty(env, 'whoami', '--json'),
    royalty(env, 'rightsholders', '--json'),
  ]);
  t.equal(a.code, 0, a.stderr);
  t.equal(b.code, 0, b.stderr);
  const after = JSON.parse(await readFile(configFile, 'utf8')).profiles.default.tokens;
  t.not(after.refreshToken, before.refreshToken, 'rotated');
  t.ok(after.expiresAt > Date.now() + 3000_000, 'a fresh hour');
  // a second refresh of the same token would have revoked the whole login: it still works
  const again = await royalty(env, 'whoami', '--json');
  t.equal(again.code, 0, again.stderr);
});

const uploaded: { statementId: string; file: string }[] = [];

t.test(
  'upload: three statements, waited for, with status, rows and the exact net earnings',
  async (t) => {
    const created = await royalty(env, 'call', 'rightsholder.create', 'name=Cli Artist', '--json');
    t.equal(created.code, 0, created.stderr);
    const rightsholderId = JSON.parse(created.stdout).id as string;

    const run = await royalty(
      env,
      'upload',
      ...FIXTURES.map(fixture),
      '--rightsholder',
      'Cli Artist',
      '--json',
    );
    t.equal(run.code, 0, run.stderr);
    const answer = JSON.parse(run.stdout) as {
      files: any[];
      totals: { currency: string; netEarnings: string }[];
    };
    t.equal(answer.files.length, 3);
    for (const [i, name] of FIXTURES.entries()) {
      const file = answer.files[i];
      const want = await expected(name);
      t.equal(file.file, fixture(name));
      t.equal(file.status, 'processed', name);
      t.equal(file.rowCount, want.dataRecords, `${name}: rows`);
      t.equal(
        canonicalDecimal(file.netEarnings),
        canonicalDecimal(want.netEarningsSum),
        `${name}: net earnings`,
      );
      uploaded.push({ statementId: file.statementId, file: name });
    }
    const gbp = answer.totals.find((x) => x.currency === 'GBP');
    t.equal(
      canonicalDecimal(gbp!.netEarnings),
      '659.0885041163',
      'tunecore + cargo, to the last decimal',
    );
    t.equal(answer.totals.length, 2);
    const other = answer.totals.find((x) => x.currency !== 'GBP')!;
    t.equal(
      canonicalDecimal(other.netEarnings),
      canonicalDecimal((await expected('distrokid-legacy.tsv')).netEarningsSum),
    );

    // the server has them under that rightsholder
    const listed = await owner.client.mutate('upload.statements', {
      organizationId: org,
      rightsholderId,
    });
    t.equal(listed.ok && listed.data.totalFiles, 3);

    // the same bytes again (under another name too): reported as duplicates, nothing uploaded
    const copy = path.join(configDir, 'cargo-copy.csv');
    await writeFile(copy, await readFile(fixture('cargo-royalty_extended.csv')));
    const again = await royalty(
      env,
      'upload',
      fixture('tunecore.csv'),
      copy,
      '--rightsholder',
      rightsholderId,
    );
    t.equal(again.code, 0, again.stderr);
    t.match(again.stderr, /tunecore\.csv: duplicate of tunecore\.csv/);
    t.match(again.stderr, /cargo-copy\.csv: duplicate of cargo-royalty_extended\.csv/);
    t.match(again.stdout, /duplicate/);
    const after = await owner.client.mutate('upload.statements', {
      organizationId: org,
      rightsholderId,
    });
    t.equal(after.ok && after.data.totalFiles, 3, 'no new statement');

    const statements = await royalty(env, 'statements', '--status', 'processed', '--csv');
    t.equal(statements.code, 0, statements.stderr);
    const rows = parse(statements.stdout, { columns: true }) as Record<string, string>[];
    t.same(rows.map((r) => r.fileName).sort(), [
      'cargo-royalty_extended.csv',
      'distrokid-legacy.tsv',
      'tunecore.csv',
    ]);
    t.same(Object.keys(rows[0]!), [
      'id',
      'fileName',
      'status',
      'rowCount',
      'netEarnings',
      'currency',
      'createdAt',
    ]);
    // --watch ends once nothing is uploading or processing: here at once
    const watched = await royalty(env, 'statements', '--watch', '--json');
    t.equal(watched.code, 0, watched.stderr);
    t.equal(JSON.parse(watched.stdout).totalFiles, 3);
  },
);

t.test('query: the async pair answers what cube.query answers', async (t) => {
  const run = await royalty(
    env,
    'query',
    '--measure',
    'royalty_earnings',
    '--measure',
    'statement_row_count',
    '--dimension',
    'currency',
    '--order',
    'currency',
    '--json',
  );
  t.equal(run.code, 0, run.stderr);
  const answer = JSON.parse(run.stdout);
  const rightsholders = await owner.client.query('rightsholder.list', { organizationId: org });
  const ids = rightsholders.ok ? rightsholders.data.data.map((r: { id: string }) => r.id) : [];
  const direct = await owner.client.mutate('cube.query', {
    organizationId: org,
    query: {
      measures: ['analytics_full_view.royalty_earnings', 'analytics_full_view.statement_row_count'],
      dimensions: ['analytics_full_view.currency'],
      filters: [{ member: 'analytics_full_view.rightsholder_id', operator: 'equals', values: ids }],
      order: [['analytics_full_view.currency', 'asc']],
    },
  });
  t.ok(direct.ok);
  t.same(answer.data, direct.ok && direct.data.data);
  const gbp = answer.data.find(
    (r: Record<string, string>) => r['analytics_full_view.currency'] === 'GBP',
  );
  t.equal(canonicalDecimal(gbp['analytics_full_view.royalty_earnings']), '659.0885041163');
  t.equal(Number(gbp['analytics_full_view.statement_row_count']), 48);

  const table = await royalty(
    env,
    'query',
    '--measure',
    'royalty_earnings',
    '--dimension',
    'currency',
    '--month-range',
    '2000-01..2099-12',
    '--filter',
    'currency=GBP',
  );
  t.equal(table.code, 0, table.stderr);
  t.match(table.stdout, /currency.*royalty_earnings/);
  t.match(table.stdout, /GBP.*659\.0885041163/, 'the filter keeps GBP alone');
  t.notMatch(table.stdout, /USD/);
  const before = await royalty(
    env,
    'query',
    '--measure',
    'royalty_earnings',
    '--month-range',
    '1990-01..1990-12',
    '--csv',
  );
  t.equal(before.code, 0, before.stderr);
  t.equal(
    before.stdout,
    'analytics_full_view.royalty_earnings\n\n',
    'no sales in 1990: one row, its sum empty (NULL)',
  );
});

t.test('export: every file downloaded; its sums are those of cube.query', async (t) => {
  const out = path.join(configDir, 'exports');
  const run = await royalty(
    env,
    'export',
    'royalty_lines',
    '--format',
    'csv',
    '--out',
    out,
    '--json',
  );
  t.equal(run.code, 0, run.stderr);
  const answer = JSON.parse(run.stdout);
  t.equal(answer.export.status, 'completed');
  t.equal(answer.export.rowCount, 78);
  const files = await readdir(out);
  t.equal(files.length, answer.files.length);
  t.equal(files.length, answer.export.fileCount);
  const rows = [];
  for (const file of answer.files)
    rows.push(
      ...(parse(await readFile(file), { columns: true, bom: true }) as Record<string, string>[]),
    );
  t.equal(rows.length, 78);
  const gbp = sumDecimals(rows.filter((r) => r.currency === 'GBP').map((r) => r.royalty_earnings));
  t.equal(canonicalDecimal(gbp!), '659.0885041163');
  t.equal(canonicalDecimal(sumDecimals(rows.map((r) => r.royalty_earnings))!), '1330.57449214904');
});

t.test(
  'generic access: endpoints, describe, call with --json; exit codes with the errorCode',
  async (t) => {
    const endpoints = await royalty(env, 'endpoints', 'rightsholder', '--json');
    t.equal(endpoints.code, 0, endpoints.stderr);
    const list = JSON.parse(endpoints.stdout);
    t.ok(list.every((p: { name: string }) => p.name.startsWith('rightsholder.')));
    t.match(
      list.find((p: { name: string }) => p.name === 'rightsholder.list'),
      { type: 'query', method: 'GET', scope: 'cli', minRole: 'member' },
    );
    t.match(
      list.find((p: { name: string }) => p.name === 'rightsholder.create'),
      { type: 'mutation', method: 'POST', minRole: 'writer' },
    );

    const describe = await royalty(env, 'describe', 'upload.uploadFile');
    t.equal(describe.code, 0);
    t.match(
      describe.stdout,
      /^upload\.uploadFile {2}\(mutation, POST \/trpc\/upload\.uploadFile\)/,
    );
    t.match(describe.stdout, /"rightsholderId"/);

    const call = await royalty(
      env,
      'call',
      'rightsholder.list',
      '--input',
      '{"pagination":{"page":1,"limit":5}}',
      '--json',
    );
    t.equal(call.code, 0, call.stderr);
    const page = JSON.parse(call.stdout);
    t.same(page.pagination, {
      page: 1,
      limit: 5,
      total: 1,
      totalPages: 1,
      hasNext: false,
      hasPrev: false,
    });
    t.equal(page.data[0].name, 'Cli Artist');

    const invalid = await royalty(env, 'call', 'rightsholder.getById', 'id=not-a-uuid');
    t.equal(invalid.code, 2, 'validation: exit 2');
    t.match(invalid.stderr, /\[BAD_REQUEST VALIDATION_FAILED\]/);
    t.match(invalid.stderr, /id/);
    const missing = await royalty(
      env,
      'call',
      'rightsholder.getById',
      'id=00000000-0000-4000-8000-000000000000',
    );
    t.equal(missing.code, 1, 'a server answer: exit 1');
    t.match(missing.stderr, /\[NOT_FOUND RIGHTSHOLDER_NOT_FOUND\]/);
    const unknown = await royalty(env, 'call', 'rightsholder.nope');
    t.equal(unknown.code, 2);
    t.match(unknown.stderr, /No procedure rightsholder\.nope/);
    const badPair = await royalty(env, 'call', 'rightsholder.list', '__proto__.x=1');
    t.equal(badPair.code, 2);
    const badJson = await royalty(env, 'call', 'rightsholder.list', '--input', '{oops');
    t.equal(badJson.code, 2);
    t.match(badJson.stderr, /The input is not JSON/);
    const usage = await royalty(env, 'upload');
    t.equal(usage.code, 2, 'a missing argument: exit 2');
    const csvOfObject = await royalty(env, 'whoami', '--csv', '--json');
    t.equal(csvOfObject.code, 2);
    const noServer = await royalty({ ...env, ROYALTY_URL: 'http://127.0.0.1:9' }, 'whoami');
    t.equal(noServer.code, 1, 'no server: exit 1');
  },
);

t.test('API-key credentials from the environment come first', async (t) => {
  const status = await royalty(apiKeyEnv, 'auth', 'status', '--json');
  t.equal(status.code, 0, status.stderr);
  t.match(JSON.parse(status.stdout), {
    credentials: 'ROYALTY_API_KEY',
    email: owner.email,
    organizationId: org,
  });
  const noOrg = await royalty(
    { ROYALTY_URL: srv.url, ROYALTY_API_KEY: owner.apiKey, ROYALTY_CONFIG_DIR: configDir },
    'whoami',
  );
  t.equal(noOrg.code, 2);
  t.match(noOrg.stderr, /ROYALTY_API_KEY needs ROYALTY_ORGANIZATION_ID/);
  // --no-wait: uploaded and completed, not waited for
  const noWait = await royalty(
    apiKeyEnv,
    'upload',
    fixture('awal.csv'),
    '--rightsholder',
    'Cli Artist',
    '--no-wait',
    '--json',
  );
  t.equal(noWait.code, 0, noWait.stderr);
  const [file] = JSON.parse(noWait.stdout).files;
  t.match(file, {
    file: fixture('awal.csv'),
    status: 'uploaded',
    rowCount: null,
    netEarnings: null,
  });
  const state = await owner.client.mutate('upload.statements', {
    organizationId: org,
    filter: { statementIds: [file.statementId] },
  });
  t.not(state.ok && state.data.items[0].status, 'uploading', 'completed: the server has the file');
  const badKey = await royalty({ ...apiKeyEnv, ROYALTY_API_KEY: 'rk_not_a_key' }, 'whoami');
  t.equal(badKey.code, 1);
  t.match(badKey.stderr, /\[UNAUTHORIZED/);
});

t.test('completion scripts for bash, zsh and fish', async (t) => {
  const bash = await royalty(env, 'completion', 'bash');
  t.equal(bash.code, 0);
  t.match(bash.stdout, /complete -F _royalty royalty/);
  t.match(bash.stdout, /"upload"\) words="[^"]*--rightsholder/);
  const fish = await royalty(env, 'completion', 'fish');
  t.match(fish.stdout, /complete -c royalty -n '__fish_use_subcommand' -a upload/);
  const zsh = await royalty(env, 'completion', 'zsh');
  t.match(zsh.stdout, /^#compdef royalty/);
  const other = await royalty(env, 'completion', 'powershell');
  t.equal(other.code, 2);
});

t.test('a login that cannot be renewed asks for royalty login (exit 2)', async (t) => {
  const stored = JSON.parse(await readFile(configFile, 'utf8'));
  stored.profiles.browser.tokens = {
    accessToken: 'expired',
    refreshToken: 'revoked-or-forged',
    expiresAt: Date.now() - 1000,
  };
  await writeFile(configFile, JSON.stringify(stored), { mode: 0o600 });
  const run = await royalty(env, 'rightsholders', '--profile', 'browser');
  t.equal(run.code, 2, run.stderr);
  t.match(run.stderr, /The login could not be renewed \(.*\): run royalty login/);
});

t.test('logout revokes the login on the server and forgets it', async (t) => {
  const refreshToken = JSON.parse(await readFile(configFile, 'utf8')).profiles.default.tokens
    .refreshToken as string;
  const run = await royalty(env, 'logout');
  t.equal(run.code, 0, run.stderr);
  t.notOk(JSON.parse(await readFile(configFile, 'utf8')).profiles.default.tokens);
  const res = await fetch(`${srv.url}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      client_id: 'royalty-cli',
      refresh_token: refreshToken,
    }),
  });
  t.equal(res.status, 400);
  t.equal(((await res.json()) as { error: string }).error, 'invalid_grant');
  const after = await royalty(env, 'whoami');
  t.equal(after.code, 2);
  t.match(after.stderr, /Not logged in/);
});
