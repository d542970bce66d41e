// The entry of every worker thread. Plain JavaScript, so that it runs both from the source and
// beside the compiled bundles: a worker thread does not inherit the main thread's TypeScript
// loader, so when the pool runs from source it registers tsx itself. Then it loads the worker
// module it serves (workerData.module: workers/<file>.ts, or its bundle dist/workers/<file>.js)
// and dispatches each task to one of its exported functions.
import { workerData } from 'node:worker_threads';

if (workerData.typescript) {
  const { register } = await import('tsx/esm/api');
  register();
}
const workerFile = await import(workerData.module);

export default async function dispatch({ fn, input }) {
  const handler = workerFile[fn];
  if (typeof handler !== 'function') {
    return { ok: false, errorCode: 'WORKER_FAILED', message: `${workerData.module} has no function ${fn}` };
  }
  return handler(input);
}
