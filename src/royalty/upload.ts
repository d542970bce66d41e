// royalty upload <files...>: each file's SHA-256 first, so that a file whose bytes the
// organization already has (or named twice) is reported as a duplicate and not sent again; the
// others go up as one upload (presigned PUT, complete), with a bar per file and one overall; then
// the statements are waited for and their status, row count and net earnings printed, with the
// exact totals per currency.
import path from 'node:path';
import {
  fileFacts,
  SETTLED_STATUSES,
  type FileFacts,
  type RoyaltyClient,
  type Statement,
} from '../client/index.ts';
import { resolveRightsholders } from './rightsholders.ts';
import {
  EXIT_FAILURE,
  formatOf,
  print,
  sumDecimals,
  UsageError,
  type OutputOptions,
} from './output.ts';
import { Progress } from './progress.ts';
import { openSession, type GlobalOptions } from './session.ts';

export interface UploadCommandOptions extends GlobalOptions, OutputOptions {
  rightsholder: string;
  distributor?: string;
  wait: boolean;
  force?: boolean;
}

interface FileResult {
  file: string;
  statementId: string | null;
  status: string;
  rowCount: number | null;
  netEarnings: string | null;
  currency: string | null;
  duplicateOf?: string;
}

/** Statuses whose bytes no longer count as uploaded (as the server's duplicate check has them). */
const GONE = new Set(['aborted', 'expired', 'deleted']);
const FAILED = new Set(['failed', 'bad', 'aborted', 'expired']);

/** The organization's statements by SHA-256 of their bytes. */
async function knownBytes(client: RoyaltyClient): Promise<Map<string, Statement>> {
  const known = new Map<string, Statement>();
  for await (const s of client.paginate(
    client.api.upload.statements.mutate,
    { organizationId: client.org() },
    2000,
  )) {
    if (s.sha256 && !GONE.has(s.status) && !known.has(s.sha256)) known.set(s.sha256, s);
  }
  return known;
}

export async function uploadFiles(files: string[], options: UploadCommandOptions): Promise<void> {
  const { client } = await openSession(options);
  const format = formatOf(options);
  const [rightsholderId] = await resolveRightsholders(client, [options.rightsholder]);
  const facts = await factsOfFiles(files);
  const known = options.force ? new Map<string, Statement>() : await knownBytes(client);
  const progress = new Progress(format !== 'json');
  const results = await sendFiles(client, files, facts, known, progress, {
    rightsholderId: rightsholderId!,
    distributorId: options.distributor,
  });
  if (options.wait) await settleUploaded(client, results, progress);
  progress.stop();
  printResults(results, format);
  if (results.some((r) => FAILED.has(r.status))) process.exitCode = EXIT_FAILURE;
}

/** Each file's SHA-256 and size; a file that cannot be read is a usage error naming it. */
async function factsOfFiles(files: string[]): Promise<Map<string, FileFacts>> {
  const facts = new Map<string, FileFacts>();
  for (const file of files) {
    try {
      facts.set(file, await fileFacts(file));
    } catch (error) {
      throw new UsageError(
        `${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
      );
    }
  }
  return facts;
}

/**
 * The files whose bytes are new go up as one upload, each with its bar and the overall one; a
 * duplicate (of a known statement, or of a file named before it) is reported and not sent.
 */
async function sendFiles(
  client: RoyaltyClient,
  files: string[],
  facts: Map<string, FileFacts>,
  known: Map<string, Statement>,
  progress: Progress,
  target: { rightsholderId: string; distributorId: string | undefined },
): Promise<FileResult[]> {
  const totalBytes = [...facts.values()].reduce((sum, f) => sum + f.size, 0);
  const overall = progress.bar('all files', totalBytes);
  const results: FileResult[] = [];
  const seen = new Map<string, string>();
  let uploadId: string | undefined;
  let sentBefore = 0;
  for (const file of files) {
    const { sha256, size } = facts.get(file)!;
    const earlier = known.get(sha256);
    const twice = seen.get(sha256);
    if (earlier || twice) {
      const of = earlier ? `${earlier.fileName} (${earlier.id})` : twice!;
      progress.log(`${file}: duplicate of ${of}, not uploaded`);
      results.push({ ...unread(file, earlier?.id ?? null, 'duplicate'), duplicateOf: of });
      sentBefore += size;
      overall.update(sentBefore);
      continue;
    }
    seen.set(sha256, file);
    const bar = progress.bar(path.basename(file), size);
    const uploaded = await client.uploadStatement({
      rightsholderId: target.rightsholderId,
      file,
      facts: { sha256, size },
      ...(uploadId ? { uploadId } : {}),
      ...(target.distributorId ? { distributorId: target.distributorId } : {}),
      onBytes: (sent) => {
        bar.update(sent);
        overall.update(sentBefore + sent);
      },
    });
    uploadId = uploaded.uploadId;
    sentBefore += size;
    bar.update(size, size, 'uploaded');
    results.push(unread(file, uploaded.statementId, 'uploaded'));
  }
  return results;
}

/** A file's result before its statement is read: no rows, earnings or currency yet. */
function unread(file: string, statementId: string | null, status: string): FileResult {
  return { file, statementId, status, rowCount: null, netEarnings: null, currency: null };
}

/** Waits for the uploaded statements to settle; their results take the status and figures they end with. */
async function settleUploaded(
  client: RoyaltyClient,
  results: FileResult[],
  progress: Progress,
): Promise<void> {
  const ids = results.filter((r) => r.status === 'uploaded').map((r) => r.statementId!);
  if (ids.length === 0) return;
  const waiting = progress.bar('processing', ids.length);
  const settled = await client.waitForStatements(ids, {
    onUpdate: (list) =>
      waiting.update(list.filter((s) => SETTLED_STATUSES.has(s.status)).length, ids.length),
  });
  const byId = new Map(settled.map((s) => [s.id, s]));
  for (const r of results) {
    const s = r.statementId && r.status === 'uploaded' ? byId.get(r.statementId) : undefined;
    if (!s) continue;
    Object.assign(r, {
      status: s.status,
      rowCount: s.rowCount,
      netEarnings: s.netEarnings,
      currency: s.currency,
    });
    const failure = s.failureReason as { errorCode?: string; message?: string } | null;
    if (failure)
      progress.log(`${r.file}: ${s.status} [${failure.errorCode}] ${failure.message ?? ''}`);
  }
}

function printResults(results: FileResult[], format: ReturnType<typeof formatOf>): void {
  const processed = results.filter((r) => r.status === 'processed' && r.netEarnings !== null);
  const currencies = [...new Set(processed.map((r) => r.currency ?? ''))].sort();
  const totals = currencies.map((currency) => ({
    currency,
    netEarnings: sumDecimals(
      processed.filter((r) => (r.currency ?? '') === currency).map((r) => r.netEarnings!),
    ),
  }));
  if (format === 'json') return print({ files: results, totals }, format);
  print(results, format, [
    'file',
    'status',
    'rowCount',
    'netEarnings',
    'currency',
    'statementId',
    'duplicateOf',
  ]);
  if (format === 'table')
    for (const t of totals)
      process.stdout.write(`total net earnings ${t.currency}: ${t.netEarnings}\n`);
}
