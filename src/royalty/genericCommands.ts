// royalty endpoints [namespace], royalty describe <procedure>, royalty call <procedure> [input]:
// every procedure of the server, query or mutation as its declaration says.
import type { Command } from 'commander';
import {
  fetchCatalog,
  findProcedure,
  readInput,
  takesOrganization,
  type InputOptions,
} from './catalog.ts';
import { formatOf, print, UsageError, type OutputOptions } from './output.ts';
import { openSession, profileStore, serverUrl, type GlobalOptions } from './session.ts';

type Options = GlobalOptions & OutputOptions;

async function catalogFor(options: Options) {
  return fetchCatalog(await serverUrl(options, profileStore(options)));
}

async function endpoints(namespace: string | undefined, options: Options): Promise<void> {
  const catalog = await catalogFor(options);
  const listed = namespace
    ? catalog.filter((p) => p.name.startsWith(`${namespace}.`) || p.name === namespace)
    : catalog;
  if (listed.length === 0)
    throw new UsageError(
      `No namespace ${namespace}: the namespaces are ${[...new Set(catalog.map((p) => p.name.split('.')[0]))].join(', ')}`,
    );
  const format = formatOf(options);
  const rows = listed.map((p) => ({
    name: p.name,
    type: p.method === 'GET' ? 'query' : 'mutation',
    method: p.method,
    scope: p.scope,
    minRole: p.minRole,
    summary: format === 'table' ? firstSentence(p.summary) : p.summary,
    ...(p.deprecated ? { deprecated: p.deprecated } : {}),
  }));
  print(rows, format, ['name', 'type', 'scope', 'minRole', 'summary']);
}

function firstSentence(text: string): string {
  const end = text.search(/[.:;](\s|$)/);
  const sentence = end === -1 ? text : text.slice(0, end);
  return sentence.length > 90 ? `${sentence.slice(0, 87)}...` : sentence;
}

async function describe(name: string, options: Options): Promise<void> {
  const entry = findProcedure(await catalogFor(options), name);
  if (formatOf(options) === 'json') return print(entry, 'json');
  const lines = [
    `${entry.name}  (${entry.method === 'GET' ? 'query, GET' : 'mutation, POST'} ${entry.path})`,
    `scope: ${entry.scope || '(web app)'}   minimum role: ${entry.minRole ?? 'none'}`,
    ...(entry.deprecated ? [`deprecated: ${entry.deprecated}`] : []),
    '',
    entry.summary,
    '',
    'input (JSON Schema):',
    JSON.stringify(entry.input, null, 2),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function call(name: string, pairs: string[], options: Options & InputOptions): Promise<void> {
  const session = await openSession(options);
  const entry = findProcedure(await fetchCatalog(session.url), name);
  let input = await readInput(options, pairs);
  // the organization goes in the body (transport rule 7): the session's, unless given
  if (takesOrganization(entry) && session.client.organizationId) {
    if (input === undefined) input = {};
    if (
      typeof input === 'object' &&
      input !== null &&
      !Array.isArray(input) &&
      !('organizationId' in input)
    ) {
      input = { ...input, organizationId: session.client.organizationId };
    }
  }
  const answer = await session.client.call(
    entry.name,
    entry.method === 'GET' ? 'query' : 'mutation',
    input,
  );
  print(answer ?? null, formatOf(options));
}

export function genericCommands(program: Command): void {
  program
    .command('endpoints')
    .argument('[namespace]', 'only this namespace (rightsholder, upload, cube, ...)')
    .description('the procedures of the server, with type, scope, minimum role and summary')
    .action((namespace: string | undefined, _opts, cmd: Command) =>
      endpoints(namespace, cmd.optsWithGlobals()),
    );
  program
    .command('describe')
    .argument('<procedure>', 'a procedure name, such as rightsholder.list')
    .description("one procedure: method, scope, minimum role, summary and its input's JSON Schema")
    .action((name: string, _opts, cmd: Command) => describe(name, cmd.optsWithGlobals()));
  program
    .command('call')
    .argument('<procedure>', 'a procedure name, such as rightsholder.list')
    .argument(
      '[fields...]',
      'input fields as key=value (a.b=1 nests; values that read as JSON are JSON)',
    )
    .description(
      'call any procedure: a query with GET, a mutation with POST, as declared; organizationId is added',
    )
    .option('--input <json>', 'the input as JSON')
    .option('--input-file <file>', 'the input as a JSON file (- for standard input)')
    .action((name: string, fields: string[], opts: InputOptions, cmd: Command) =>
      call(name, fields, { ...cmd.optsWithGlobals(), ...opts }),
    );
}
