// npm run docs:gen: writes the generated reference pages (src/docs/reference.ts) into docs/reference/.
// With --check it writes nothing and exits 1 naming each page that differs from what is committed.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { appRouter } from '../src/api/index.ts';
import { referencePages } from '../src/docs/reference.ts';
import { projectRoot } from '../src/paths.ts';

const check = process.argv.includes('--check');
const stale: string[] = [];
for (const [file, text] of Object.entries(referencePages(appRouter))) {
  const target = path.join(projectRoot, file);
  let committed: string | undefined;
  try {
    committed = readFileSync(target, 'utf8');
  } catch {
    committed = undefined;
  }
  if (committed === text) continue;
  if (check) {
    stale.push(file);
  } else {
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, text);
    console.log(`wrote ${file}`);
  }
}
if (stale.length > 0) {
  console.error(
    `generated pages differ from the committed ones (run npm run docs:gen): ${stale.join(', ')}`,
  );
  process.exit(1);
}
