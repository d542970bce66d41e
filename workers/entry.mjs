// The entry of every worker thread. Plain JavaScript: a worker thread does not inherit the main
// thread's TypeScript loader, so it registers tsx itself, then loads the worker file it serves
// (workers/<file>.ts) and dispatches each task to one of its exported functions.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const workerFile = await import(new URL(`./${workerData.file}.ts`, import.meta.url).href);

export default async function dispatch({ fn, input }) {
  const handler = workerFile[fn];
  if (typeof handler !== 'function') {
    return { ok: false, errorCode: 'WORKER_FAILED', message: `workers/${workerData.file}.ts has no function ${fn}` };
  }
  return handler(input);
}
