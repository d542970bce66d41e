// The typed client library (`royalty-engine/client`): a tRPC client typed from the server's own
// router, so that a wrong procedure name or input field fails `tsc`, with the specification's
// transport (batch=1 always; GET with URL-encoded input for queries, POST for mutations) and its
// recovery table (./recovery.ts), plus the helpers for the jobs people do every day: upload a
// statement and wait for it, run an analytics query with the async pair, page through a list, run
// an export and download its files. The command-line client `royalty` is built on it.
import path from 'node:path';
import { createTRPCClient, getUntypedClient, httpBatchLink, type TRPCClient } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../api/index.ts';
import { recoveryLink } from './recovery.ts';
import { downloadTo, fileFacts, putFile, type FileFacts } from './transfer.ts';

export type { AppRouter };
export type RouterInputs = inferRouterInputs<AppRouter>;
export type RouterOutputs = inferRouterOutputs<AppRouter>;
export { TRPCClientError } from '@trpc/client';
export { errorCodeOf, specificCodeOf } from './recovery.ts';
export { TransferError } from './transfer.ts';

/** An OAuth access token source: the CLI's stored login, or any code that holds tokens. */
export interface TokenProvider {
  /** a current access token (refreshed before it expires) */
  accessToken(): Promise<string>;
  /** called once after an UNAUTHORIZED answer: get a new access token, whatever the expiry says */
  refresh(): Promise<void>;
}

export interface RoyaltyClientOptions {
  /** the service's base URL (`https://royalty.example.com`); procedures live under /trpc */
  url: string;
  /** service-to-service: an API key, sent as x-api-key with x-organization-id */
  apiKey?: string;
  /** the organization the helpers act in (and, with an API key, the x-organization-id header) */
  organizationId?: string;
  /** a person's OAuth tokens (instead of an API key) */
  tokenProvider?: TokenProvider;
  /** the longest GET URL before a batch is split (default 2000 characters) */
  maxURLLength?: number;
  /** the wait before retrying an INTERNAL_SERVER_ERROR once (default 1000 ms) */
  retryBackoffMs?: number;
  /** analytics and status polling: the interval (default 2000 ms) */
  pollIntervalMs?: number;
  /** cube.queryPoll: how many polls at most (default 30) */
  pollAttempts?: number;
  /** a fetch to use instead of the global one (tests, proxies) */
  fetch?: typeof fetch;
}

/** A failure of a helper's workflow (a statement that failed, an export that did not complete). */
export class RoyaltyClientError extends Error {
  constructor(
    message: string,
    readonly errorCode: string,
  ) {
    super(message);
    this.name = 'RoyaltyClientError';
  }
}

interface PageEnvelope {
  page: number;
  hasNext: boolean;
  total: number;
}

/** Every list's answer: `{ data, pagination }`, or upload.statements' `{ items, pagination }`. */
export type Page<T> =
  { data: T[]; pagination: PageEnvelope } | { items: T[]; pagination: PageEnvelope };

interface PagedInput {
  pagination?: { page?: number; limit?: number } | undefined;
}

export type Statement = RouterOutputs['upload']['statements']['items'][number];
export type AnalyticsQuery = RouterInputs['cube']['queryAsync']['query'];
export type AnalyticsAnswer = RouterOutputs['cube']['query'];
export type ExportInput = Omit<RouterInputs['export']['trigger'], 'organizationId'>;
export type ExportView = RouterOutputs['export']['status'];

/** Statement statuses a statement does not leave by itself. */
export const SETTLED_STATUSES: ReadonlySet<string> = new Set([
  'processed',
  'needs_mapping',
  'failed',
  'skipped',
  'bad',
  'aborted',
  'expired',
  'deleted',
]);
const SETTLED_EXPORTS: ReadonlySet<string> = new Set(['completed', 'failed', 'expired']);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface UploadOptions {
  rightsholderId: string;
  /** a path on this machine */
  file: string;
  /** the name the statement gets (default: the file's base name) */
  fileName?: string;
  /** add the file to this upload (several files as one upload) */
  uploadId?: string;
  distributorId?: string;
  customName?: string;
  /** the file's size and SHA-256 when already known */
  facts?: FileFacts;
  /** hears the bytes sent so far */
  onBytes?: (sent: number, total: number) => void;
  /** wait until the statement is processed (or otherwise settled) and answer it too */
  wait?: boolean;
}

export interface Uploaded {
  uploadId: string;
  statementId: string;
  size: number;
  sha256: string;
  /** the settled statement, when waited for */
  statement?: Statement;
}

export class RoyaltyClient {
  /** every procedure, typed: `client.api.rightsholder.list.query({ organizationId })` */
  readonly api: TRPCClient<AppRouter>;
  readonly url: string;
  readonly organizationId: string | undefined;
  private readonly pollIntervalMs: number;

  constructor(options: RoyaltyClientOptions) {
    if (options.apiKey && options.tokenProvider)
      throw new Error('Give an API key or a token provider, not both');
    if (options.apiKey && !options.organizationId)
      throw new Error('An API key is sent with its organization: organizationId is required');
    this.url = options.url.replace(/\/+$/, '');
    this.organizationId = options.organizationId;
    this.pollIntervalMs = options.pollIntervalMs ?? 2000;
    const { apiKey, organizationId, tokenProvider } = options;
    this.api = createTRPCClient<AppRouter>({
      links: [
        recoveryLink({
          ...(tokenProvider ? { refreshCredential: () => tokenProvider.refresh() } : {}),
          backoffMs: options.retryBackoffMs ?? 1000,
          maxBackoffMs: 60_000,
          pollIntervalMs: this.pollIntervalMs,
          pollAttempts: options.pollAttempts ?? 30,
        }),
        httpBatchLink({
          url: `${this.url}/trpc`,
          maxURLLength: options.maxURLLength ?? 2000,
          ...(options.fetch ? { fetch: options.fetch } : {}),
          async headers() {
            if (apiKey) return { 'x-api-key': apiKey, 'x-organization-id': organizationId! };
            if (tokenProvider)
              return { authorization: `Bearer ${await tokenProvider.accessToken()}` };
            return {};
          },
        }),
      ],
    });
  }

  /** The organization the helpers act in; an error when none was given. */
  org(): string {
    if (!this.organizationId)
      throw new RoyaltyClientError('No organization: pass organizationId', 'ORGANIZATION_REQUIRED');
    return this.organizationId;
  }

  /** Any procedure by name (the CLI's `call`): a query is sent with GET, a mutation with POST. */
  call(name: string, type: 'query' | 'mutation', input: unknown): Promise<unknown> {
    const untyped = getUntypedClient(this.api);
    return type === 'query' ? untyped.query(name, input) : untyped.mutation(name, input);
  }

  /** Every item of a paginated list, page after page (`limit` per page, 2000 at most). */
  async *paginate<I extends PagedInput, T>(
    list: (input: I) => Promise<Page<T>>,
    input: I,
    limit = 500,
  ): AsyncGenerator<T> {
    for (let page = 1; ; page++) {
      const answer = await list({ ...input, pagination: { ...input.pagination, page, limit } });
      yield* 'items' in answer ? answer.items : answer.data;
      if (!answer.pagination.hasNext) return;
    }
  }

  /** Presign, PUT the bytes, complete (the statement is then queued for processing); with `wait`, its outcome. */
  async uploadStatement(options: UploadOptions): Promise<Uploaded> {
    const organizationId = this.org();
    const facts = options.facts ?? (await fileFacts(options.file));
    const started = await this.api.upload.uploadFile.mutate({
      organizationId,
      rightsholderId: options.rightsholderId,
      fileName: options.fileName ?? path.basename(options.file),
      size: facts.size,
      sha256: facts.sha256,
      ...(options.uploadId ? { uploadId: options.uploadId } : {}),
      ...(options.distributorId ? { distributorId: options.distributorId } : {}),
      ...(options.customName ? { customName: options.customName } : {}),
    });
    await putFile(started.url, started.headers, options.file, facts.size, (sent) =>
      options.onBytes?.(sent, facts.size),
    );
    await this.api.upload.uploadAction.mutate({
      organizationId,
      action: { type: 'complete', statementId: started.statementId },
    });
    const uploaded: Uploaded = {
      uploadId: started.uploadId,
      statementId: started.statementId,
      ...facts,
    };
    if (options.wait) [uploaded.statement] = await this.waitForStatements([started.statementId]);
    return uploaded;
  }

  /** The statements, polled until each has settled (processed, needs_mapping, failed, ...). */
  async waitForStatements(
    statementIds: string[],
    opts: { timeoutMs?: number; onUpdate?: (statements: Statement[]) => void } = {},
  ): Promise<Statement[]> {
    const organizationId = this.org();
    const deadline = Date.now() + (opts.timeoutMs ?? 30 * 60_000);
    for (;;) {
      const answer = await this.api.upload.statements.mutate({
        organizationId,
        filter: { statementIds, includeDeleted: true },
        pagination: { page: 1, limit: Math.max(1, statementIds.length) },
      });
      const byId = new Map(answer.items.map((s) => [s.id, s]));
      const statements = statementIds
        .map((id) => byId.get(id))
        .filter((s): s is Statement => s !== undefined);
      opts.onUpdate?.(statements);
      if (
        statements.length === statementIds.length &&
        statements.every((s) => SETTLED_STATUSES.has(s.status))
      )
        return statements;
      if (Date.now() > deadline)
        throw new RoyaltyClientError(
          `Statements still processing after ${opts.timeoutMs} ms`,
          'WAIT_TIMEOUT',
        );
      await sleep(Math.min(this.pollIntervalMs, 1000));
    }
  }

  /** An analytics query through the async pair: cube.queryAsync, then cube.queryPoll until it completes. */
  async queryAnalytics(
    query: AnalyticsQuery,
    opts: { usePreagg?: boolean; maxPolls?: number } = {},
  ): Promise<AnalyticsAnswer> {
    const input = { organizationId: this.org(), query, usePreagg: opts.usePreagg ?? false };
    let answer = await this.api.cube.queryAsync.mutate(input);
    for (let polls = 0; answer.status !== 'completed'; polls++) {
      if (polls >= (opts.maxPolls ?? 150))
        throw new RoyaltyClientError(
          `The analytics query did not complete after ${polls} polls`,
          'WAIT_TIMEOUT',
        );
      await sleep(this.pollIntervalMs);
      answer = await this.api.cube.queryPoll.mutate(input);
    }
    return answer.data as AnalyticsAnswer;
  }

  /** Triggers an export and waits for it to complete; `onProgress` hears its status as it runs. */
  async runExport(
    input: ExportInput,
    opts: { onProgress?: (view: ExportView) => void; timeoutMs?: number } = {},
  ): Promise<ExportView> {
    const organizationId = this.org();
    const { exportId } = await this.api.export.trigger.mutate({ ...input, organizationId });
    const deadline = Date.now() + (opts.timeoutMs ?? 60 * 60_000);
    for (;;) {
      const view = await this.api.export.status.query({ organizationId, exportId });
      opts.onProgress?.(view);
      if (view.status === 'completed') return view;
      if (SETTLED_EXPORTS.has(view.status)) {
        const failed = view as { errorCode?: string | null; reason?: string | null };
        throw new RoyaltyClientError(
          `The export ${exportId} is ${view.status}: ${failed.reason ?? ''}`,
          failed.errorCode ?? 'EXPORT_FAILED',
        );
      }
      if (Date.now() > deadline)
        throw new RoyaltyClientError(
          `The export ${exportId} is still ${view.status}`,
          'WAIT_TIMEOUT',
        );
      await sleep(Math.min(this.pollIntervalMs, 1000));
    }
  }

  /** Downloads every file (part) of a completed export into `dir`, checking each one's SHA-256. */
  async downloadExport(
    exportId: string,
    dir: string,
    onFile?: (fileName: string, received: number, total: number) => void,
  ): Promise<string[]> {
    const organizationId = this.org();
    const { files } = await this.api.export.listFiles.query({ organizationId, exportId });
    const written: string[] = [];
    for (const file of files) {
      const { url } = await this.api.export.downloadFile.mutate({
        organizationId,
        exportId,
        fileId: file.id,
      });
      const target = path.join(dir, path.basename(file.fileName));
      const facts = await downloadTo(url, target, (received) =>
        onFile?.(file.fileName, received, Number(file.sizeBytes)),
      );
      if (file.sha256 && facts.sha256 !== file.sha256) {
        throw new RoyaltyClientError(
          `${file.fileName}: the download's SHA-256 ${facts.sha256} is not the export's ${file.sha256}`,
          'DOWNLOAD_CORRUPT',
        );
      }
      written.push(target);
    }
    return written;
  }
}

export function createRoyaltyClient(options: RoyaltyClientOptions): RoyaltyClient {
  return new RoyaltyClient(options);
}

export { fileFacts, type FileFacts };
