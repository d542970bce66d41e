// The README's first session, as a new user pastes it: its shell block, extracted from README.md
// and run by bash against a started service (API and job runner), twice in a row, each step's
// answer checked exactly. And the pages a person lands on: GET / and GET /docs.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { startTestServer } from '../helpers/server.ts';
import { repoRoot } from '../setup/paths.ts';

const run = promisify(execFile);
const readme = readFileSync(`${repoRoot}/README.md`, 'utf8');
const session = readme.slice(readme.indexOf('## A first session'));
const pasted = /```sh\n([\s\S]*?)```/.exec(session)![1]!;
// a person polls once a second; the test every 200 ms, so no step waits up to a second more than
// it needs (faster polls only add processes competing with the service for the cores)
const POLL = '; do sleep 1; done';
const block = pasted.replaceAll(POLL, '; do sleep 0.2; done');
const printed = /```text\n([\s\S]*?)```/.exec(session)![1]!.trimEnd().split('\n');

// two whole sessions (statement processing, an analytics database, an export): about a minute on
// an idle machine, many more on a loaded one
t.setTimeout(900_000);
const srv = await startTestServer(t, { role: 'serve' });

async function paste(t: Test): Promise<string[]> {
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ROYALTY_URL: srv.url,
    DATABASE_URL: srv.config.databaseUrl,
    S3_ENDPOINT: srv.config.s3!.endpoint,
    S3_BUCKET: srv.config.s3!.bucket,
    S3_ACCESS_KEY_ID: srv.config.s3!.accessKeyId,
    S3_SECRET_ACCESS_KEY: srv.config.s3!.secretAccessKey,
    DATA_DIR: srv.config.dataDir,
    LOG_LEVEL: 'warn',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  const { stdout, stderr } = await run('bash', ['-c', `set -o pipefail\n${block}`], {
    cwd: repoRoot,
    env,
    timeout: 400_000,
  });
  t.equal(stderr, '', 'nothing on stderr');
  return stdout.trimEnd().split('\n');
}

const CSV_HEADER =
  'rightsholder_id,rightsholder_name,stmt_period_full,distributor_id,distributor_name,source,territory,currency,row_count,units,royalty_earnings,gross_royalty_earnings,royalty_earnings_usd,gross_royalty_earnings_usd';

function checkSession(t: Test, lines: string[]): void {
  t.equal(lines.length, 6, lines.join('\n'));
  t.equal(lines[0], '{"status":"uploaded"}', 'the upload is complete');
  t.equal(
    lines[1],
    '{"status":"processed","rowCount":30,"netEarnings":"730.217419961500","flags":[]}',
    'processed, clean: no flag',
  );
  t.same(JSON.parse(lines[2]!), [
    {
      'analytics_full_view.territory': 'MA',
      'analytics_full_view.royalty_earnings': '220.9183802895',
    },
    {
      'analytics_full_view.territory': 'CA',
      'analytics_full_view.royalty_earnings': '164.0936124476',
    },
    {
      'analytics_full_view.territory': 'FR',
      'analytics_full_view.royalty_earnings': '148.8340664881',
    },
  ]);
  t.equal(lines[3], CSV_HEADER, 'the export downloaded');
  t.match(
    lines[4],
    /^[0-9a-f-]{36},Demo Artist,2024M01,[0-9a-f-]{36},Believe,Apple Music,CA,USD,1,13300\.000000000000,9\.953532500100,42\.602194000000,9\.9535325001,42\.6021940000$/,
  );
  t.match(
    lines[5],
    /,Demo Artist,2024M01,.*,Believe,Apple Music,DE,USD,2,25140\.000000000000,49\.041581835400,/,
  );
}

t.test('the first session, pasted as written, answers each step', async (t) => {
  t.equal(pasted.split(POLL).length - 1, 2, 'both waits poll, the only change the test makes');
  const lines = await paste(t);
  checkSession(t, lines);
  t.equal(printed[0], lines[0], 'the README shows what it prints');
  t.equal(printed[1], lines[1]);
  t.ok(
    lines[2]!.startsWith(printed[2]!.slice(0, printed[2]!.indexOf('…')).trimEnd()),
    'the query answer as shown',
  );
  t.equal(printed[3]!.replace(/…$/, ''), CSV_HEADER.slice(0, printed[3]!.length - 1));
});

t.test('pasted again: a second organization, the same answers', async (t) => {
  checkSession(t, await paste(t));
});

t.test('GET / links to the documentation, the health check and the API', async (t) => {
  const res = await fetch(`${srv.url}/`);
  t.equal(res.status, 200);
  t.same(await res.json(), {
    name: 'royalty engine',
    docs: `${srv.url}/docs`,
    health: `${srv.url}/trpc/health`,
    api: `${srv.url}/trpc/<namespace>.<procedure>`,
    procedures: `${srv.url}/docs/schemas.json`,
    llms: `${srv.url}/docs/llms.txt`,
  });
  const health = await fetch(`${srv.url}/trpc/health`);
  t.equal(health.status, 200);
  await health.body?.cancel();
});

t.test('GET /docs lists the pages; each is served as Markdown; nothing else is', async (t) => {
  const index = await fetch(`${srv.url}/docs`);
  t.equal(index.status, 200);
  t.equal(index.headers.get('content-type'), 'text/html; charset=utf-8');
  const html = await index.text();
  for (const page of [
    'api.md',
    'architecture.md',
    'reference/configuration.md',
    'reference/errors.md',
    'spec/royalty-api-spec.md',
    'decisions/cors.md',
  ]) {
    t.match(html, `<a href="/docs/${page}">`, page);
  }
  t.match(
    html,
    '<a href="/docs/reference/configuration.md">Configuration reference</a>',
    'titled by its heading',
  );
  const page = await fetch(`${srv.url}/docs/reference/errors.md`);
  t.equal(page.status, 200);
  t.equal(page.headers.get('content-type'), 'text/markdown; charset=utf-8');
  t.equal(await page.text(), readFileSync(`${repoRoot}/docs/reference/errors.md`, 'utf8'));
  for (const hostile of [
    '../package.json',
    '..%2fpackage.json',
    'reference/../../README.md',
    '%2e%2e/%2e%2e/etc/passwd',
    '.vitepress/config.mts',
    'api',
    'nope.md',
  ]) {
    const res = await fetch(`${srv.url}/docs/${hostile}`);
    t.equal(res.status, 404, hostile);
    t.notMatch(await res.text(), /"name": "royalty-engine"|root:/, hostile);
  }
});
