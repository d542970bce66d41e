// The worker boundary as tasks.ts describes it: each task's module exports, under the name given,
// a function of the task's type (checked by tsc through `implemented`), and nothing in src/
// imports workers/ (types travel through src/workers/).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { taskFunctions, type TaskFunction, type TaskName } from '../../src/workers/tasks.ts';
import { clusterTitlesTask } from '../../workers/cluster.ts';
import { headerHash } from '../../workers/headerHash.ts';
import { normalizeStatement } from '../../workers/normalize.ts';
import { sampleFile } from '../../workers/sample.ts';
import { locateTable } from '../../workers/statementFile.ts';
import { repoRoot } from '../setup/paths.ts';

const implemented: { [K in TaskName]: TaskFunction<K> } = {
  headerHash,
  locateTable,
  normalize: normalizeStatement,
  sample: sampleFile,
  clusterTitles: clusterTitlesTask,
};

t.test('each task is the function its module exports under the name tasks.ts gives', async (t) => {
  t.same(Object.keys(taskFunctions).sort(), Object.keys(implemented).sort());
  for (const [task, { module, fn }] of Object.entries(taskFunctions)) {
    const exported = (await import(path.join(repoRoot, 'workers', `${module}.ts`))) as Record<
      string,
      unknown
    >;
    t.equal(
      exported[fn],
      implemented[task as TaskName],
      `${task}: workers/${module}.ts exports ${fn}`,
    );
  }
});

t.test('nothing in src/ imports workers/', async (t) => {
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const file = path.join(dir, name);
      return statSync(file).isDirectory() ? files(file) : file.endsWith('.ts') ? [file] : [];
    });
  const offending = files(path.join(repoRoot, 'src')).filter((file) =>
    [...readFileSync(file, 'utf8').matchAll(/from '([^']+)'/g)].some(
      (m) =>
        m[1]!.startsWith('.') &&
        path
          .resolve(path.dirname(file), m[1]!)
          .startsWith(path.join(repoRoot, 'workers') + path.sep),
    ),
  );
  t.same(
    offending.map((f) => path.relative(repoRoot, f)),
    [],
  );
});
