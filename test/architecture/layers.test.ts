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
    paths: ['^src/(errors|config|paths|deps|schemas|pagination|periods|decimal)[.]ts$', '^src/(db|storage|net|workers)/'],
  },
  { name: 'access', paths: ['^src/(auth|access)/'] },
  {
    name: 'domain',
    paths: ['^src/(activity|ai|analytics|catalog|exports|fx|ingest|invitations|jobs|lenses|lookups|market|organizations|rightsholders)/'],
  },
  // src/client: the client library, typed from the router (a type-only import of src/api)
  { name: 'interfaces', paths: ['^src/(trpc|api|mcp|oauth|docs|client)/', '^src/app[.]ts$'] },
  // src/royalty: the command-line client, built on src/client
  { name: 'entry', paths: ['^src/(cli|royalty)/', '^src/(main|runtime)[.]ts$'] },
];

const layerPaths = (names: string[]) => LAYERS.filter((l) => names.includes(l.name)).flatMap((l) => l.paths);

/**
 * Known imports of workers/ from src/, until the thread code's shared parts move below src/ (the
 * header hash) and its types come through the typed pool: listed so that the rule holds for every
 * other file. An entry that no longer occurs fails the test: remove it here.
 */
const SRC_IMPORTS_OF_WORKERS: [string, string][] = [
  ['src/analytics/sandbox.ts', 'workers/analyticsSandbox.ts'],
  ['src/api/mapping/create.ts', 'workers/headerHash.ts'],
  ['src/ingest/fieldNames.ts', 'workers/headerHash.ts'],
  ['src/ingest/file/locate.ts', 'workers/headerHash.ts'],
  ['src/ingest/file/table.ts', 'workers/headerHash.ts'],
  ['src/ingest/file/vocabulary.ts', 'workers/headerHash.ts'],
  ['src/ingest/fileTypes.ts', 'workers/normalize.ts'],
  ['src/ingest/library.ts', 'workers/headerHash.ts'],
  ['src/ingest/mappings.ts', 'workers/headerHash.ts'],
  ['src/ingest/pipeline.ts', 'workers/normalize.ts'],
  ['src/ingest/preview.ts', 'workers/normalize.ts'],
];

/** Known import circles, until src/exports/run.ts is split (attempts, row sources, writers). */
const KNOWN_CIRCLES: [string, string][] = [['src/exports/expire.ts', 'src/exports/run.ts']];

function rules(): IForbiddenRuleType[] {
  const below: IForbiddenRuleType[] = LAYERS.slice(0, -1).map((layer, i) => ({
    name: `${layer.name}-imports-no-higher-layer`,
    severity: 'error',
    from: { path: layer.paths },
    to: { path: LAYERS.slice(i + 1).flatMap((l) => l.paths) },
  }));
  return [
    ...below,
    {
      // the procedure builder: what the procedures stand on; the domain supplies its rules as data
      name: 'procedure-builder-imports-foundation-and-access-only',
      severity: 'error',
      from: { path: '^src/trpc/' },
      to: { path: [...layerPaths(['domain', 'entry']), '^src/(api|mcp|oauth|docs)/', '^src/app[.]ts$', '^workers/'] },
    },
    { name: 'src-imports-no-thread-code', severity: 'error', from: { path: '^src/' }, to: { path: '^workers/' } },
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

async function violations(baseDir: string): Promise<{ violations: Violation[]; modules: string[] }> {
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
    violations: result.summary.violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to })),
    modules: result.modules.map((m) => m.source).filter((s) => /^(src|workers)\//.test(s)),
  };
}

const isKnown = (v: Violation) =>
  (v.rule === 'src-imports-no-thread-code' && SRC_IMPORTS_OF_WORKERS.some(([from, to]) => v.from === from && v.to === to)) ||
  (v.rule === 'no-circle' && KNOWN_CIRCLES.some((pair) => pair.includes(v.from) && pair.includes(v.to)));

// the tree is read once, for both tests of it
const tree = violations(repoRoot);

t.test('every import of src/ and workers/ points down the layers, and none closes a circle', async (t) => {
  const { violations: found, modules } = await tree;
  t.ok(modules.length > 300, `the cruise read the tree (${modules.length} modules)`);
  t.same(
    found.filter((v) => !isKnown(v)),
    [],
    'imports against the layers',
  );
  const stale = SRC_IMPORTS_OF_WORKERS.filter(([from, to]) => !found.some((v) => v.rule === 'src-imports-no-thread-code' && v.from === from && v.to === to));
  t.same(stale, [], 'listed imports of workers/ that are gone (remove them from the list)');
  const staleCircles = KNOWN_CIRCLES.filter((pair) => !found.some((v) => v.rule === 'no-circle' && pair.includes(v.from)));
  t.same(staleCircles, [], 'listed circles that are gone (remove them from the list)');
});

t.test('every module of src/ belongs to exactly one layer', async (t) => {
  const { modules } = await tree;
  const all = LAYERS.flatMap((l) => l.paths.map((p) => ({ layer: l.name, re: new RegExp(p) })));
  const misplaced = modules
    .filter((m) => m.startsWith('src/'))
    .map((m) => ({ module: m, layers: [...new Set(all.filter((p) => p.re.test(m)).map((p) => p.layer))] }))
    .filter((m) => m.layers.length !== 1);
  t.same(misplaced, [], 'a new folder of src/ is placed in LAYERS above and in docs/architecture.md');
});

t.test('the rules catch an import up the layers, into workers/, and a circle', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'layers-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const files: Record<string, string> = {
    'src/errors.ts': "export const ok = 1;\n",
    'src/trpc/init.ts': "import { ok } from '../errors.ts';\nexport const base = ok;\n",
    'src/trpc/procedure.ts': "import { stat } from '../analytics/store.ts';\nexport const p = stat;\n",
    'src/analytics/store.ts': "import { base } from '../trpc/init.ts';\nimport { n } from '../../workers/normalize.ts';\nimport { q } from './query.ts';\nexport const stat = base + n + q;\n",
    'src/analytics/query.ts': "import { stat } from './store.ts';\nexport const q = () => stat;\n",
    'workers/normalize.ts': "export const n = 1;\n",
  };
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  const { violations: found } = await violations(dir);
  const pairs = found.map((v) => `${v.rule}: ${v.from} -> ${v.to}`).sort();
  t.same(pairs, [
    'domain-imports-no-higher-layer: src/analytics/store.ts -> src/trpc/init.ts',
    'no-circle: src/analytics/query.ts -> src/analytics/store.ts',
    'procedure-builder-imports-foundation-and-access-only: src/trpc/procedure.ts -> src/analytics/store.ts',
    'src-imports-no-thread-code: src/analytics/store.ts -> workers/normalize.ts',
  ]);
});
