// GET /docs/llms.txt: unauthenticated text in the llmstxt.org shape, every procedure exactly once
// with its method, scope and role, the analytics members, the error codes, and links that answer.
import t from 'tap';
import { appRouter } from '../../src/api/index.ts';
import { model } from '../../src/analytics/model.ts';
import { describeProcedures } from '../../src/docs/schemas.ts';
import { errorRegistry } from '../../src/errors.ts';
import { startTestServer } from '../helpers/server.ts';

const srv = await startTestServer(t);
const res = await fetch(`${srv.url}/docs/llms.txt`);
const text = await res.text();
const lines = text.split('\n');

t.test('served without credentials as UTF-8 text', async (t) => {
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
  t.ok(
    Buffer.byteLength(text) < 200_000,
    `${Buffer.byteLength(text)} bytes: one file an agent can read whole`,
  );
});

t.test(
  'the llmstxt.org shape: H1, a blockquote, paragraphs, then H2 sections of list items',
  async (t) => {
    t.equal(lines[0], '# Royalty API');
    t.equal(lines[1], '');
    t.match(lines[2], /^> A royalty data engine/);
    const firstSection = lines.findIndex((l) => l.startsWith('## '));
    t.ok(firstSection > 3);
    t.notOk(
      lines.slice(1, firstSection).some((l) => l.startsWith('#')),
      'no heading before the first H2',
    );
    const after = lines.slice(firstSection);
    t.same(
      after.filter((l) => l.startsWith('#') && !l.startsWith('## ')),
      [],
      'only H2 headings after it',
    );
    t.same(
      after.filter((l) => l !== '' && !l.startsWith('## ') && !l.startsWith('- ')),
      [],
      'sections hold list items only',
    );
    t.equal(lines.at(-1), '', 'ends with a newline');
    const links = after
      .filter((l) => l.includes(']('))
      .filter((l) => !/^- \[[^\]]+\]\([^)\s]+\)(: .+)?$/.test(l));
    t.same(links, [], 'a link item is - [name](url): note');
  },
);

t.test('every procedure exactly once, with method, scope and minimum role', async (t) => {
  const procedures = describeProcedures(appRouter);
  t.ok(procedures.length > 100);
  for (const p of procedures) {
    const mentions = lines.filter((l) => l.startsWith(`- \`${p.name}\` (`));
    t.equal(mentions.length, 1, p.name);
  }
  t.equal(
    lines.filter((l) => /^- `[\w.]+` \((GET|POST),/.test(l)).length,
    procedures.length,
    'and nothing else listed as a procedure',
  );
  t.ok(
    lines.includes(
      `- \`rightsholder.list\` (GET, scope cli, role member, organizationId): ${describeProcedures(appRouter).find((p) => p.name === 'rightsholder.list')!.meta!.summary}`,
    ),
  );
  t.match(
    text,
    /^- `user\.currentUser` \(GET, scope cli, role any\): /m,
    'no organizationId where the input has none',
  );
  t.match(text, /^- `rightsholder\.create` \(POST, scope cli, role writer, organizationId\): /m);
  t.match(
    text,
    new RegExp(`${describeProcedures(appRouter).filter((p) => p.type === 'query').length} queries`),
  );
});

t.test(
  'the analytics members, the error codes with recovery, authentication and the tool server',
  async (t) => {
    for (const m of model.measures)
      t.ok(
        lines.some((l) => l.startsWith(`- measure \`${m.name}\` (`)),
        m.name,
      );
    for (const d of model.dimensions)
      t.ok(
        lines.some((l) => l.startsWith(`- dimension \`${d.name}\` (`)),
        d.name,
      );
    for (const code of Object.keys(errorRegistry))
      t.equal(lines.filter((l) => l.startsWith(`- errorCode \`${code}\` (`)).length, 1, code);
    t.match(text, /^- `TIMEOUT` \(HTTP 408\): .*cube\.queryAsync/m);
    t.match(text, /^- `UNAUTHORIZED` \(HTTP 401\): .*retry once/m);
    t.match(text, /x-api-key: <key>.*x-organization-id/);
    t.match(text, new RegExp(`tool server for AI assistants is at ${srv.url}/mcp `));
    t.match(text, /batch=1/);
  },
);

t.test('every link answers', async (t) => {
  const urls = [...text.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]!);
  t.ok(urls.length >= 6);
  for (const url of new Set(urls)) {
    t.ok(url.startsWith(`${srv.url}/`), `${url} is on the service`);
    const answer = await fetch(url);
    t.equal(answer.status, 200, url);
    await answer.body?.cancel();
  }
});
