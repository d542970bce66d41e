// The entry of every worker thread. Plain JavaScript, so that it runs both from the source and
// beside the compiled bundles: a worker thread does not inherit the main thread's TypeScript
// loader, so when the pool runs from source it registers tsx itself. Each task names the worker
// module that runs it (workers/<file>.ts, or its bundle dist/workers/<file>.js) and the function
// of it; a module is loaded on its first task (workerData.preload: at once, for a warm thread).
import { workerData } from 'node:worker_threads';

if (workerData.typescript) {
  const { register } = await import('tsx/esm/api');
  register();
}

/** module URL → the module's namespace, loading or loaded */
const modules = new Map();
const load = (url) => {
  let loading = modules.get(url);
  if (!loading) {
    loading = import(url);
    modules.set(url, loading);
  }
  return loading;
};
await Promise.all((workerData.preload ?? []).map(load));

export default async function dispatch({ module, fn, input }) {
  const handler = (await load(module))[fn];
  if (typeof handler !== 'function') {
    return { ok: false, errorCode: 'WORKER_FAILED', message: `${module} has no function ${fn}` };
  }
  return handler(input);
}
