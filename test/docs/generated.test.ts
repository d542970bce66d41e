// The reference pages under docs/reference/ are generated (npm run docs:gen), never edited: each
// committed page is exactly what the generator makes of the code it describes today.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { appRouter } from '../../src/api/index.ts';
import { settingsReference } from '../../src/config.ts';
import { referencePages } from '../../src/docs/reference.ts';
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
    t.equal(readFileSync(path.join(repoRoot, file), 'utf8'), text, `${file} is up to date (npm run docs:gen)`);
  }
});

t.test('every setting is described, and the table states the defaults the schema applies', async (t) => {
  const settings = settingsReference();
  t.same(settings.filter((s) => s.description.length < 5).map((s) => s.name), [], 'a .describe() on every variable');
  const table = pages['docs/reference/configuration.md']!;
  t.match(table, /^\| `PORT` \| `3000` \| HTTP port \|$/m);
  t.match(table, /^\| `THREADS_MAX` \| — \| .*\(unset: `2`\) \|$/m, 'a computed default is said in words');
  t.match(table, /^\| `FX_RATES_CRON` \| `0 17 \* \* 1-5` \| /m, 'a default before a refinement');
  t.match(table, /^\| `FX_RATES_URL` \| `https:\/\/www\.ecb\.europa\.eu\/stats\/eurofxref\/eurofxref\.zip` \| /m, 'a default before a pipe');
  t.equal(table.split('\n').filter((l) => l.startsWith('| `')).length, settings.length, 'one row per variable');
});
