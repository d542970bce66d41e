// The DuckDB connections of a worker thread, so that the thread pool can stop their work before
// it ends the threads (src/workers/threadPool.ts, close). DuckDB work is stopped by interrupting
// its connections, never by ending its thread: a thread ended while DuckDB runs a query in it
// (worker.terminate(), piscina's destroy(), process.exit(), the thread's heap limit) aborts the
// whole process, jobs and requests of every organization with it: node-api's completion of the
// query throws into the torn-down thread (`terminate called after throwing an instance of
// 'Napi::Error'`, SIGABRT).
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { BroadcastChannel, isMainThread, workerData } from 'node:worker_threads';

const open = new Set<DuckDBConnection>();
let stopped = false;

// the pool's channel (one per pool: two services in one process close their pools apart)
const channelName = isMainThread
  ? undefined
  : (workerData as { interruptChannel?: string } | null)?.interruptChannel;
if (channelName) {
  const channel = new BroadcastChannel(channelName);
  // an idle thread is not kept alive by it
  channel.unref();
  channel.onmessage = () => {
    stopped = true;
    for (const c of open) c.interrupt();
  };
}

/** A connection the pool can interrupt; close it with disconnect(). */
export async function connect(instance: DuckDBInstance): Promise<DuckDBConnection> {
  const c = await instance.connect();
  open.add(c);
  if (stopped) c.interrupt();
  return c;
}

export function disconnect(c: DuckDBConnection): void {
  open.delete(c);
  c.closeSync();
}

/** Whether the pool is closing: an interrupted query is then the service stopping, not a limit of the work. */
export function stopping(): boolean {
  return stopped;
}
