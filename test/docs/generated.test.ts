// The reference pages under docs/reference/ are generated (npm run docs:gen), never edited: each
// committed page is exactly what the generator makes of the code it describes today. And the
// link checker CI runs over the docs (npm run docs:links) finds what it must.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { appRouter } from '../../src/api/index.ts';
import { settingsReference } from '../../src/config.ts';
import { referencePages } from '../../src/docs/reference.ts';
import { brokenLinks, slug } from '../../scripts/check-links.ts';
import { repoRoot } from '../setup/paths.ts';

const pages = referencePages(appRouter);

t.test('each committed reference page is what npm run docs:gen writes', async (t) => {
  t.same(Object.keys(pages).sort(), [
    'docs/reference/analytics-members.md',
    'docs/reference/configuration.md',
    'docs/reference/errors.md',
    'docs/reference/mapping-fields.md',
    'docs/reference/procedures.md',
  ]);
  for (const [file, text] of Object.entries(pages)) {
    t.equal(
      readFileSync(path.join(repoRoot, file), 'utf8'),
      text,
      `${file} is up to date (npm run docs:gen)`,
    );
  }
});

t.test(
  'every setting is described, and the table states the defaults the schema applies',
  async (t) => {
    const settings = settingsReference();
    t.same(
      settings.filter((s) => s.description.length < 5).map((s) => s.name),
      [],
      'a .describe() on every variable',
    );
    const table = pages['docs/reference/configuration.md']!;
    t.match(table, /^\| `PORT` \| `3000` \| HTTP port \|$/m);
    t.match(
      table,
      /^\| `THREADS_MAX` \| — \| .*\(unset: `2`\) \|$/m,
      'a computed default is said in words',
    );
    t.match(table, /^\| `FX_RATES_CRON` \| `0 17 \* \* 1-5` \| /m, 'a default before a refinement');
    t.match(
      table,
      /^\| `FX_RATES_URL` \| `https:\/\/www\.ecb\.europa\.eu\/stats\/eurofxref\/eurofxref\.zip` \| /m,
      'a default before a pipe',
    );
    t.equal(
      table.split('\n').filter((l) => l.startsWith('| `')).length,
      settings.length,
      'one row per variable',
    );
  },
);

t.test(
  'the link checker names each broken link and anchor, and passes the good ones',
  async (t) => {
    t.equal(slug('`cube.sqlQuery`: threat model'), 'cubesqlquery-threat-model');
    t.equal(slug('Resolution "with AI"'), 'resolution-with-ai');
    const dir = mkdtempSync(path.join(repoRoot, '.tap', 'links-'));
    const page = path.join(dir, 'page.md');
    writeFileSync(
      page,
      [
        '# Page',
        '## Two words',
        '## Two words',
        '[self](#two-words) [again](#two-words-1) [api](../../docs/api.md#errors) [site](https://example.com/x#y)',
        '[gone](missing.md) [no anchor](../../docs/api.md#nowhere) [here](#three-words) [out](../../../../etc/passwd)',
        '```sh',
        '[in code](missing-too.md)',
        '```',
        'and `[inline](missing-three.md)` code',
      ].join('\n'),
    );
    t.same(brokenLinks(page), [
      { line: 5, target: 'missing.md', why: 'no such file' },
      { line: 5, target: '../../docs/api.md#nowhere', why: 'no heading #nowhere' },
      { line: 5, target: '#three-words', why: 'no heading #three-words' },
      { line: 5, target: '../../../../etc/passwd', why: 'leads outside the repository' },
    ]);
  },
);
