// The package as another project uses it: `npm pack` (its prepack builds dist/ and the client's
// type declarations), the tarball unpacked into a new project's node_modules as `npm install`
// places it (its dependencies resolve from this repository's node_modules: the tests reach no
// registry), a program type-checked with tsc against `royalty-engine/client` (a wrong procedure
// or input field must fail), compiled, and run against a service; and the installed `royalty`
// command runs from the package. The program uploads a statement and waits for it.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { canonicalDecimal } from '../helpers/decimal.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { repoRoot } from '../setup/paths.ts';

const run = promisify(execFile);
const srv = await startTestServer(t, { role: 'serve' });
const owner = await newOrganization(srv, 'Consumer Org');
const artist = await owner.client.mutate('rightsholder.create', {
  organizationId: owner.organizationId,
  name: 'Packaged Artist',
});
const statementFile = path.join(repoRoot, 'fixtures', 'statements', 'tunecore.csv');

// inside the repository (.tmp/ is ignored), so that the package's dependencies resolve upwards
await mkdir(path.join(repoRoot, '.tmp'), { recursive: true });
const project = await mkdtemp(path.join(repoRoot, '.tmp', 'consumer-'));
t.teardown(() => rm(project, { recursive: true, force: true }));
const tsc = path.join(repoRoot, 'node_modules', '.bin', 'tsc');

const PROGRAM = `import { createRoyaltyClient, errorCodeOf, type RouterOutputs } from 'royalty-engine/client';

const client = createRoyaltyClient({
  url: process.env.ROYALTY_URL!,
  apiKey: process.env.ROYALTY_API_KEY!,
  organizationId: process.env.ROYALTY_ORGANIZATION_ID!,
});
const page: RouterOutputs['rightsholder']['list'] = await client.api.rightsholder.list.query({ organizationId: client.org() });
const names: string[] = [];
for await (const r of client.paginate(client.api.rightsholder.list.query, { organizationId: client.org() })) names.push(r.name);
const missing = await client.api.rightsholder.getById.query({ organizationId: client.org(), id: '00000000-0000-4000-8000-000000000000' }).catch(errorCodeOf);
const { statement } = await client.uploadStatement({ rightsholderId: process.env.RIGHTSHOLDER_ID!, file: process.env.STATEMENT_FILE!, wait: true });
console.log(JSON.stringify({ total: page.pagination.total, names, missing, statement: [statement?.status, statement?.rowCount, statement?.netEarnings] }));

export function neverCalled(): void {
  // @ts-expect-error no procedure has this name
  void client.api.rightsholder.removeEverything;
  // @ts-expect-error name is a string
  void client.api.rightsholder.create.mutate({ organizationId: client.org(), name: 42 });
  // @ts-expect-error organizationId is required
  void client.api.rightsholder.list.query({});
}
`;

t.test(
  'pack, unpack into a new project, type-check, compile and run against the service',
  async (t) => {
    await run('npm', ['pack', '--pack-destination', project, '--silent'], {
      cwd: repoRoot,
      env: { ...process.env, npm_config_loglevel: 'error' },
    });
    const tarballs = (await readdir(project)).filter((f) => f.endsWith('.tgz'));
    t.same(tarballs, ['royalty-engine-0.1.0.tgz']);
    const installed = path.join(project, 'node_modules', 'royalty-engine');
    await mkdir(installed, { recursive: true });
    await run('tar', [
      '-xzf',
      path.join(project, tarballs[0]!),
      '-C',
      installed,
      '--strip-components=1',
    ]);
    const { stdout: listing } = await run('tar', ['-tzf', path.join(project, tarballs[0]!)]);
    t.match(listing, /package\/dist\/types\/src\/client\/index\.d\.ts/);
    t.match(listing, /package\/dist\/src\/client\/index\.js/);
    t.match(listing, /package\/bin\/royalty\.mjs/);
    t.notMatch(listing, /package\/node_modules\//);

    await writeFile(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    await writeFile(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: true,
          outDir: 'out',
          types: ['node'],
        },
        include: ['program.ts'],
      }),
    );
    await writeFile(path.join(project, 'program.ts'), PROGRAM);
    const checked = await run(tsc, ['-p', project]).then(
      () => 'ok',
      (e: { stdout: string }) => e.stdout,
    );
    t.equal(checked, 'ok', 'the program type-checks, and each @ts-expect-error is an error');

    const { stdout } = await run(process.execPath, [path.join(project, 'out', 'program.js')], {
      cwd: project,
      env: {
        PATH: process.env.PATH,
        ROYALTY_URL: srv.url,
        ROYALTY_API_KEY: owner.apiKey,
        ROYALTY_ORGANIZATION_ID: owner.organizationId,
        RIGHTSHOLDER_ID: artist.ok ? artist.data.id : '',
        STATEMENT_FILE: statementFile,
      },
    });
    const answer = JSON.parse(stdout);
    t.same(
      { ...answer, statement: undefined },
      { total: 1, names: ['Packaged Artist'], missing: 'NOT_FOUND', statement: undefined },
    );
    t.same(
      answer.statement.slice(0, 2),
      ['processed', 28],
      'uploadStatement with wait: the statement processed',
    );
    t.equal(canonicalDecimal(answer.statement[2]), '436.0742266413');

    // the command installed with the package
    const cli = await run(
      process.execPath,
      [path.join(installed, 'bin', 'royalty.mjs'), 'rightsholders', '--csv'],
      {
        cwd: project,
        env: {
          PATH: process.env.PATH,
          ROYALTY_URL: srv.url,
          ROYALTY_API_KEY: owner.apiKey,
          ROYALTY_ORGANIZATION_ID: owner.organizationId,
          ROYALTY_CONFIG_DIR: project,
        },
      },
    );
    t.match(
      cli.stdout,
      /^id,name,legalName,isPublisherGroup,updatedAt\n[0-9a-f-]{36},Packaged Artist,,false,/,
    );
  },
);

t.test('a program naming a procedure that does not exist fails tsc', async (t) => {
  await writeFile(
    path.join(project, 'program.ts'),
    `import { createRoyaltyClient } from 'royalty-engine/client';\nconst client = createRoyaltyClient({ url: 'http://127.0.0.1:1' });\nawait client.api.rightsholder.lst.query({ organizationId: 'x' });\n`,
  );
  const failure = await run(tsc, ['-p', project]).then(
    () => '',
    (e: { stdout: string }) => e.stdout,
  );
  t.match(failure, /program\.ts\(3,\d+\): error TS2551: Property 'lst' does not exist/);
});
