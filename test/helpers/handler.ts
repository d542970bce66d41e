// Procedures called in process, at the handler: the app router's createCaller with the context
// createContextInner builds from the same credential headers an HTTP request carries, against the
// real parts (a database of its own cloned from the template, an S3 bucket of its own, DuckDB,
// the thread pool) but no HTTP listener. Behaviour tests use this; the transport, the sweeps and
// the end-to-end files keep the real HTTP service (test/helpers/server.ts).
//
// What a test sees is what an HTTP client sees: inputs and answers pass through JSON, and an
// error is the shape the app's own error formatter gives the wire (src/trpc/init.ts), so
// test/helpers/outcome.ts asserts the same data.code and data.errorCode at both depths. Not
// here: the transport's checks (batching, methods, headers, JSON text), rate limits (none in
// process), OAuth bearer tokens. Embed-session bearer tokens (`cs_…`) are resolved by the rules the
// app gives its contexts (src/analytics/sessions.ts cubeSessionTokens).
import { getTRPCErrorFromUnknown, getTRPCErrorShape, TRPCError } from '@trpc/server';
import type { TaskList } from 'graphile-worker';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { appRouter } from '../../src/api/index.ts';
import { closeAnalytics } from '../../src/analytics/engine.ts';
import { cubeSessionTokens } from '../../src/analytics/sessions.ts';
import { credentialsFromHeaders } from '../../src/auth/principal.ts';
import type { Config } from '../../src/config.ts';
import { createPool } from '../../src/db/pool.ts';
import type { Deps } from '../../src/deps.ts';
import { AppError } from '../../src/errors.ts';
import { syncMappingLibrary } from '../../src/ingest/library.ts';
import { startJobRunner } from '../../src/jobs/runner.ts';
import { ObjectStore } from '../../src/storage/objectStore.ts';
import { createContextInner, type Context } from '../../src/trpc/context.ts';
import { createCallerFactory } from '../../src/trpc/init.ts';
import { createThreadPool } from '../../src/workers/threadPool.ts';
import { createTestDatabase } from './db.ts';
import { testObjectStore } from './objectStore.ts';
import type { InputArg, MutationPath, OutputOf, QueryPath } from './procedures.ts';
import { testConfig } from './testConfig.ts';
import type { Outcome, TestClient, TrpcErrorBody } from './trpc.ts';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface TestHandler {
  config: Config;
  deps: Deps;
  /** a client with no credentials */
  anonymous: TestClient;
  /** a client sending these credential headers (x-api-key, x-organization-id, authorization) */
  client(headers: Record<string, string>): TestClient;
}

const createCaller = createCallerFactory(appRouter);
/** how the app resolves a request's callers (src/app.ts), but for rate limits and OAuth tokens */
const IN_PROCESS = { address: 'in-process', sessions: cubeSessionTokens };

/**
 * The parts of the service for a test file, without HTTP: its own database, data directory and
 * S3 bucket (test/helpers/objectStore.ts). `jobs: true` also runs a job runner in this process (as the `serve` and `worker` roles
 * do), with the service's task list or `taskList`.
 */
export async function startTestHandler(
  t: Teardown,
  opts: { env?: Record<string, string>; jobs?: boolean; taskList?: (deps: Deps) => TaskList } = {},
): Promise<TestHandler> {
  const dir = await mkdtemp(path.join(tmpdir(), 'royalty-test-'));
  const db = await createTestDatabase();
  const s3 = await testObjectStore(dir);
  const config = testConfig({ databaseUrl: db.url, dataDir: dir, s3, port: 0, env: opts.env });
  // the parts src/runtime.ts composes for a process, without its HTTP server (and the imports it needs)
  const pool = createPool(config.databaseUrl!, config.databasePoolSize);
  // the template is migrated; the shared library of mappings is data each start syncs (src/runtime.ts)
  await syncMappingLibrary(pool);
  const store = new ObjectStore(config.s3!);
  await store.ensureBucket();
  const threads = createThreadPool(config.threads);
  const log = pino({ level: config.logLevel });
  const deps: Deps = { config, pool, store, threads, log };
  const runner = opts.jobs || opts.taskList ? await startRunner(deps, opts.taskList) : undefined;
  if (runner) deps.jobRunner = runner;
  t.teardown(async () => {
    await runner?.stop();
    closeAnalytics(deps);
    await threads.close();
    store.destroy();
    await pool.end();
    await s3.stop();
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });
  return {
    config,
    deps,
    anonymous: new HandlerClient(deps, {}),
    client: (headers) => new HandlerClient(deps, headers),
  };
}

async function startRunner(deps: Deps, taskList: ((deps: Deps) => TaskList) | undefined) {
  // the service's task list only when asked: it loads every task's modules
  const tasks = taskList ?? (await import('../../src/jobs/tasks.ts')).taskList;
  const { config, pool, log } = deps;
  return startJobRunner({
    pool,
    taskList: tasks(deps),
    crontab: '',
    concurrency: config.worker.concurrency,
    pollIntervalMs: config.worker.pollIntervalMs,
    log,
  });
}

/** Calls procedures in process with the credentials of these headers, as an HTTP request would carry them. */
class HandlerClient implements TestClient {
  constructor(
    private readonly deps: Deps,
    private readonly headers: Record<string, string>,
  ) {}

  with(headers: Record<string, string>): TestClient {
    return new HandlerClient(this.deps, { ...this.headers, ...headers });
  }

  query<P extends QueryPath>(path: P, ...input: InputArg<P>): Promise<Outcome<OutputOf<P>>> {
    return this.invoke('query', path, input[0]);
  }

  mutate<P extends MutationPath>(path: P, ...input: InputArg<P>): Promise<Outcome<OutputOf<P>>> {
    return this.invoke('mutation', path, input[0]);
  }

  queryUnchecked<P extends QueryPath>(path: P, input?: unknown): Promise<Outcome<any>> {
    return this.invoke('query', path, input);
  }

  mutateUnchecked<P extends MutationPath>(path: P, input?: unknown): Promise<Outcome<any>> {
    return this.invoke('mutation', path, input);
  }

  call(method: 'GET' | 'POST', path: string, input?: unknown): Promise<Outcome<any>> {
    return this.invoke(method === 'GET' ? 'query' : 'mutation', path, input);
  }

  private async invoke<T>(
    type: 'query' | 'mutation',
    path: string,
    input: unknown,
  ): Promise<Outcome<T>> {
    // what the wire would carry: JSON (undefined fields dropped, dates as strings)
    const sent = input === undefined ? undefined : JSON.parse(JSON.stringify(input));
    const ctx = this.context();
    try {
      const procedure = (
        appRouter._def.procedures as unknown as Record<
          string,
          { _def: { type: string } } | undefined
        >
      )[path];
      if (procedure && procedure._def.type !== type) {
        throw new TRPCError({
          code: 'METHOD_NOT_SUPPORTED',
          message: `Unsupported ${type === 'query' ? 'GET' : 'POST'}-request to ${procedure._def.type} procedure at path "${path}"`,
        });
      }
      const call = path.split('.').reduce<any>((node, key) => node[key], createCaller(ctx));
      const data = (await call(sent)) as unknown;
      return {
        ok: true,
        data: (data === undefined ? undefined : JSON.parse(JSON.stringify(data))) as T,
        status: 200,
      };
    } catch (cause) {
      const error = getTRPCErrorFromUnknown(cause);
      // as the HTTP adapter's onError logs it (src/app.ts): TEST_LOG_LEVEL=error shows the cause
      if (error.code === 'INTERNAL_SERVER_ERROR')
        this.deps.log.error({ err: error.cause ?? error, path }, 'procedure failed');
      const shape = getTRPCErrorShape({
        config: appRouter._def._config,
        error,
        type,
        path,
        input: sent,
        ctx,
      }) as TrpcErrorBody;
      // as JSON, like the answer
      const body = JSON.parse(JSON.stringify(shape)) as TrpcErrorBody;
      return { ok: false, error: body, status: body.data.httpStatus };
    }
  }

  /** the context the HTTP adapter builds (src/trpc/context.ts contextFactory), without rate limits */
  private context(): Context {
    const lower = Object.fromEntries(
      Object.entries(this.headers).map(([k, v]) => [k.toLowerCase(), v]),
    );
    const raw = Object.entries(lower).flat();
    try {
      const credentials = credentialsFromHeaders(lower, raw);
      if (credentials.organizationId !== undefined)
        credentials.organizationId = credentials.organizationId.toLowerCase();
      return createContextInner(this.deps, credentials, undefined, IN_PROCESS);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return createContextInner(
        this.deps,
        { apiKey: undefined, bearerToken: undefined, organizationId: undefined },
        error,
        IN_PROCESS,
      );
    }
  }
}
