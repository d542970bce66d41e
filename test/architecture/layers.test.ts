// Imports point one way: down the layers of docs/architecture.md. dependency-cruiser reads every
// import of src/ and workers/ (type-only ones too) and reports each that runs against the layers,
// each import circle, and each file that belongs to no layer.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { cruise, type ICruiseResult, type IForbiddenRuleType } from 'dependency-cruiser';
import { repoRoot } from '../setup/paths.ts';

/** The layers, lowest first: a module may import its own layer and those below, never those above. */
const LAYERS: { name: string; paths: string[] }[] = [
  {
    name: 'foundation',
    paths: [
      '^src/(errors|config|paths|deps|schemas|pagination|periods|decimal)[.]ts$',
      '^src/(db|storage|net|workers)/',
    ],
  },
  { name: 'access', paths: ['^src/(auth|access)/'] },
  {
    name: 'domain',
    paths: [
      '^src/(activity|ai|analytics|catalog|exports|fx|ingest|invitations|jobs|lenses|lookups|market|organizations|rightsholders)/',
    ],
  },
  // src/client: the client library, typed from the router (a type-only import of src/api)
  { name: 'interfaces', paths: ['^src/(trpc|api|mcp|oauth|docs|client)/', '^src/app[.]ts$'] },
  // src/royalty: the command-line client, built on src/client
  { name: 'entry', paths: ['^src/(cli|royalty)/', '^src/(main|runtime)[.]ts$'] },
];

const layerPaths = (names: string[]) =>
  LAYERS.filter((l) => names.includes(l.name)).flatMap((l) => l.paths);

/** src/workers/: the typed thread pool, in the foundation */
const THREAD_POOL = '^src/workers/';

function rules(): IForbiddenRuleType[] {
  const below: IForbiddenRuleType[] = LAYERS.slice(0, -1).map((layer, i) => ({
    name: `${layer.name}-imports-no-higher-layer`,
    severity: 'error',
    from: { path: layer.paths, pathNot: THREAD_POOL },
    to: { path: LAYERS.slice(i + 1).flatMap((l) => l.paths) },
  }));
  return [
    ...below,
    {
      // the thread pool's facade is typed from the tasks it runs: it names their types, runs none of their code
      name: 'thread-pool-imports-only-types-from-above',
      severity: 'error',
      from: { path: THREAD_POOL },
      to: { path: LAYERS.slice(1).flatMap((l) => l.paths), dependencyTypesNot: ['type-only'] },
    },
    {
      // the procedure builder: what the procedures stand on; the domain supplies its rules as data
      name: 'procedure-builder-imports-foundation-and-access-only',
      severity: 'error',
      from: { path: '^src/trpc/' },
      to: {
        path: [
          ...layerPaths(['domain', 'entry']),
          '^src/(api|mcp|oauth|docs|client)/',
          '^src/app[.]ts$',
          '^workers/',
        ],
      },
    },
    {
      name: 'src-imports-no-thread-code',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^workers/' },
    },
    {
      name: 'thread-code-imports-no-interface-or-entry',
      severity: 'error',
      from: { path: '^workers/' },
      to: { path: layerPaths(['interfaces', 'entry']) },
    },
    { name: 'no-circle', severity: 'error', from: {}, to: { circular: true } },
  ];
}

interface Violation {
  rule: string;
  from: string;
  to: string;
}

async function violations(
  baseDir: string,
): Promise<{ violations: Violation[]; modules: string[] }> {
  const { output } = await cruise(['src', 'workers'], {
    baseDir,
    ruleSet: { forbidden: rules() },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    validate: true,
  });
  const result = output as ICruiseResult;
  return {
    violations: result.summary.violations.map((v) => ({
      rule: v.rule.name,
      from: v.from,
      to: v.to,
    })),
    modules: result.modules.map((m) => m.source).filter((s) => /^(src|workers)\//.test(s)),
  };
}

// the tree is read once, for both tests of it
const tree = violations(repoRoot);

t.test(
  'every import of src/ and workers/ points down the layers, and none closes a circle',
  async (t) => {
    const { violations: found, modules } = await tree;
    t.ok(modules.length > 300, `the cruise read the tree (${modules.length} modules)`);
    t.same(found, [], 'imports against the layers');
  },
);

t.test('every module of src/ belongs to exactly one layer', async (t) => {
  const { modules } = await tree;
  const all = LAYERS.flatMap((l) => l.paths.map((p) => ({ layer: l.name, re: new RegExp(p) })));
  const misplaced = modules
    .filter((m) => m.startsWith('src/'))
    .map((m) => ({
      module: m,
      layers: [...new Set(all.filter((p) => p.re.test(m)).map((p) => p.layer))],
    }))
    .filter((m) => m.layers.length !== 1);
  t.same(
    misplaced,
    [],
    'a new folder of src/ is placed in LAYERS above and in docs/architecture.md',
  );
});

t.test(
  'the rules catch an import up from each layer, into workers/, code run by the thread pool, and a circle',
  async (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'layers-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const files: Record<string, string> = {
      'src/errors.ts': 'export const ok = 1;\n',
      'src/trpc/init.ts': "import { ok } from '../errors.ts';\nexport const base = ok;\n",
      'src/trpc/procedure.ts':
        "import { stat } from '../analytics/store.ts';\nexport const p = stat;\n",
      'src/analytics/store.ts':
        "import { base } from '../trpc/init.ts';\nimport { n } from '../../workers/normalize.ts';\nimport { q } from './query.ts';\nexport const stat = base + n + q;\nexport type Stat = number;\n",
      // the thread pool may name a domain type, not run domain code
      'src/workers/tasks.ts':
        "import type { Stat } from '../analytics/store.ts';\nimport { q } from '../analytics/query.ts';\nexport type T = Stat;\nexport const u = q;\n",
      'src/analytics/query.ts':
        "import { stat } from './store.ts';\nexport const q = () => stat;\n",
      // thread code may import the domain, not the interfaces
      'workers/normalize.ts':
        "import { base } from '../src/trpc/init.ts';\nexport const n = base;\n",
      'src/db/pool.ts': "import { r } from '../access/roles.ts';\nexport const pool = r;\n",
      'src/access/roles.ts': "import { q } from '../analytics/query.ts';\nexport const r = q;\n",
      'src/api/health.ts': "import { main } from '../main.ts';\nexport const h = main;\n",
      'src/main.ts': 'export const main = 1;\n',
    };
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    const { violations: found } = await violations(dir);
    const pairs = found.map((v) => `${v.rule}: ${v.from} -> ${v.to}`).sort();
    t.same(pairs, [
      'access-imports-no-higher-layer: src/access/roles.ts -> src/analytics/query.ts',
      'domain-imports-no-higher-layer: src/analytics/store.ts -> src/trpc/init.ts',
      'foundation-imports-no-higher-layer: src/db/pool.ts -> src/access/roles.ts',
      'interfaces-imports-no-higher-layer: src/api/health.ts -> src/main.ts',
      'no-circle: src/analytics/query.ts -> src/analytics/store.ts',
      'procedure-builder-imports-foundation-and-access-only: src/trpc/procedure.ts -> src/analytics/store.ts',
      'src-imports-no-thread-code: src/analytics/store.ts -> workers/normalize.ts',
      'thread-code-imports-no-interface-or-entry: workers/normalize.ts -> src/trpc/init.ts',
      'thread-pool-imports-only-types-from-above: src/workers/tasks.ts -> src/analytics/query.ts',
    ]);
  },
);
