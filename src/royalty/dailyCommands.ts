// The jobs people do every day: upload statements and see what they earned, list statements,
// query the analytics view, export data, list rightsholders.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { SETTLED_STATUSES } from '../client/index.ts';
import { buildQuery, shortRows, type QueryOptions } from './analytics.ts';
import { formatOf, print, UsageError, type Format, type OutputOptions } from './output.ts';
import { Progress } from './progress.ts';
import { openSession, type GlobalOptions } from './session.ts';
import { resolveRightsholders } from './rightsholders.ts';
import { uploadFiles } from './upload.ts';

type Options = GlobalOptions & OutputOptions;

const collect = (value: string, previous: string[] = []) => [...previous, value];

const STATEMENT_COLUMNS = [
  'id',
  'fileName',
  'status',
  'rowCount',
  'netEarnings',
  'currency',
  'createdAt',
];

async function statements(
  options: Options & { status?: string[]; rightsholder?: string; watch?: boolean; limit: string },
): Promise<void> {
  const { client } = await openSession(options);
  const format = formatOf(options);
  const rightsholderId = options.rightsholder
    ? (await resolveRightsholders(client, [options.rightsholder]))[0]
    : undefined;
  const limit = Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 2000)
    throw new UsageError('--limit is 1 to 2000');
  const list = () =>
    client.api.upload.statements.mutate({
      organizationId: client.org(),
      ...(rightsholderId ? { rightsholderId } : {}),
      ...(options.status
        ? { filter: { statementStatus: options.status as never, includeDeleted: false } }
        : {}),
      pagination: { page: 1, limit, sortBy: 'createdAt', sortOrder: 'desc' },
    });
  let answer = await list();
  if (!options.watch) return print(answer, format, STATEMENT_COLUMNS);
  let shown = '';
  for (;;) {
    const text = JSON.stringify(answer.items.map((s) => [s.id, s.status, s.rowCount, s.progress]));
    if (text !== shown) {
      if (format === 'table' && process.stdout.isTTY) process.stdout.write('\x1b[2J\x1b[H');
      print(answer, format, STATEMENT_COLUMNS);
      shown = text;
    }
    if (answer.items.every((s) => SETTLED_STATUSES.has(s.status))) return;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    answer = await list();
  }
}

async function query(options: Options & QueryOptions & { rightsholder?: string[] }): Promise<void> {
  const { client } = await openSession(options);
  const format = formatOf(options);
  const analyticsQuery = buildQuery(
    options,
    await resolveRightsholders(client, options.rightsholder),
  );
  const answer = await client.queryAnalytics(analyticsQuery);
  if (format === 'json') return print(answer, format);
  const rows = (answer as { data: Record<string, unknown>[] }).data;
  print(format === 'table' ? shortRows(rows) : rows, format);
}

async function exportData(
  type: string,
  options: Options & { format: string; rightsholder?: string[]; out: string; filters?: string },
): Promise<void> {
  const { client } = await openSession(options);
  const format: Format = formatOf(options);
  let filters: Record<string, unknown> | undefined;
  if (options.filters) {
    try {
      filters = JSON.parse(options.filters) as Record<string, unknown>;
    } catch {
      throw new UsageError(
        '--filters is a JSON object (royalty describe export.trigger shows its fields)',
      );
    }
  }
  const rightsholderIds = await resolveRightsholders(client, options.rightsholder);
  await mkdir(options.out, { recursive: true });
  const progress = new Progress(format !== 'json');
  const bar = progress.bar(`export ${type}`, 1);
  const done = await client.runExport(
    {
      type: type as never,
      format: options.format as never,
      rightsholderIds,
      ...(filters ? { filters: filters as never } : {}),
    },
    {
      onProgress: (view) =>
        bar.update(
          view.progress.done,
          view.progress.total ?? Math.max(1, view.progress.done),
          view.status,
        ),
    },
  );
  bar.update(done.rowCount ?? 0, done.rowCount ?? 0, 'completed');
  const bars = new Map<string, ReturnType<Progress['bar']>>();
  const files = await client.downloadExport(done.id, options.out, (fileName, received, total) => {
    let fileBar = bars.get(fileName);
    if (!fileBar) bars.set(fileName, (fileBar = progress.bar(fileName, total)));
    fileBar.update(received, total);
  });
  progress.stop();
  const written = files.map((file) => ({ file: path.resolve(file) }));
  if (format === 'json') return print({ export: done, files: written.map((w) => w.file) }, format);
  process.stderr.write(`export ${done.id}: ${done.rowCount} rows in ${files.length} file(s)\n`);
  print(written, format);
}

async function rightsholders(options: Options & { search?: string }): Promise<void> {
  const { client } = await openSession(options);
  const organizationId = client.org();
  const all = [];
  for await (const r of client.paginate(
    client.api.rightsholder.list.query,
    { organizationId, ...(options.search ? { search: options.search } : {}) },
    2000,
  ))
    all.push(r);
  print(all, formatOf(options), ['id', 'name', 'legalName', 'isPublisherGroup', 'updatedAt']);
}

export function dailyCommands(program: Command): void {
  program
    .command('upload')
    .argument('<files...>', 'statement files (CSV, TSV, TXT, XLSX, XLS, ZIP, GZ)')
    .requiredOption('--rightsholder <id-or-name>', 'the rightsholder the statements belong to')
    .option('--distributor <id>', 'the distributor of the statements')
    .option('--no-wait', 'do not wait for the statements to be processed')
    .option('--force', 'upload a file even when the same bytes were uploaded before')
    .description(
      'upload statements (presigned PUT), wait for each, print status, row count and net earnings',
    )
    .action((files: string[], opts, cmd: Command) =>
      uploadFiles(files, { ...cmd.optsWithGlobals(), ...opts }),
    );
  program
    .command('statements')
    .description('statements of the organization, newest first')
    .option(
      '--status <status>',
      'only this status (repeatable): processed, processing, failed, needs_mapping, ...',
      collect,
    )
    .option('--rightsholder <id-or-name>', 'only this rightsholder')
    .option('--limit <n>', 'how many (1 to 2000)', '50')
    .option('--watch', 'show them again as they change, until none is uploading or processing')
    .action((opts, cmd: Command) => statements({ ...cmd.optsWithGlobals(), ...opts }));
  program
    .command('query')
    .description(
      'an analytics query (submitted, then polled); members by short name: royalty_earnings, territory, ...',
    )
    .option('--measure <name>', 'a measure (repeatable)', collect)
    .option('--dimension <name>', 'a dimension (repeatable)', collect)
    .option(
      '--filter <member=value>',
      'a filter (repeatable): = != ~ (contains) !~ > >= < <=; values split on commas',
      collect,
    )
    .option('--month-range <from..to>', 'sales months, YYYY-MM..YYYY-MM')
    .option('--granularity <unit>', 'group by sales period: day, week, month, quarter, year')
    .option('--order <member[:desc]>', 'sort (repeatable)', collect)
    .option('--limit <n>', 'at most this many rows')
    .option(
      '--rightsholder <id-or-name>',
      'only these rightsholders (repeatable; default: all)',
      collect,
    )
    .action((opts, cmd: Command) => query({ ...cmd.optsWithGlobals(), ...opts }));
  program
    .command('export')
    .argument('<type>', 'royalty_lines, earnings_summary, statements or catalog')
    .requiredOption('--format <format>', 'csv, xlsx or parquet')
    .option(
      '--rightsholder <id-or-name>',
      'only these rightsholders (repeatable; default: all)',
      collect,
    )
    .option('--filters <json>', 'filters as JSON (royalty describe export.trigger)')
    .option('--out <dir>', 'where the files go', '.')
    .description('run an export, wait for it, download every file')
    .action((type: string, opts, cmd: Command) =>
      exportData(type, { ...cmd.optsWithGlobals(), ...opts }),
    );
  program
    .command('rightsholders')
    .description('rightsholders of the organization')
    .option('--search <text>', 'names, legal names and aliases containing this')
    .action((opts, cmd: Command) => rightsholders({ ...cmd.optsWithGlobals(), ...opts }));
}
