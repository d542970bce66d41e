// One way to write a graphile-worker task: its identifier (its payload schema is the one in
// src/jobs/payloads.ts) and what it does with the parsed payload. A payload that does not pass
// is dropped with an error in the log (a job that can never run must not be retried), after the
// task's own `onInvalid` when it records more (fx_rates_import records the refused import).
import type { JobHelpers, Task } from 'graphile-worker';
import type { Deps } from '../deps.ts';
import { payloadProblems, taskPayloads, type ParsedPayload, type TaskId } from './payloads.ts';

export interface TaskContext {
  deps: Deps;
  helpers: JobHelpers;
}

/** A task's executor, made for the running service's Deps; `id` is its identifier. */
export interface TaskDefinition<T extends TaskId = TaskId> {
  (deps: Deps): Task;
  readonly id: T;
}

export function defineTask<T extends TaskId>(
  id: T,
  run: (payload: ParsedPayload<T>, ctx: TaskContext) => Promise<void>,
  opts: { onInvalid?: (problems: string, ctx: TaskContext) => Promise<void> } = {},
): TaskDefinition<T> {
  const schema = taskPayloads[id];
  const make =
    (deps: Deps): Task =>
    async (payload, helpers) => {
      const ctx = { deps, helpers };
      const parsed = schema.safeParse(payload);
      if (!parsed.success) {
        const problems = payloadProblems(parsed.error);
        await opts.onInvalid?.(problems, ctx);
        helpers.logger.error(`${id}: invalid payload, dropped: ${problems}`);
        return;
      }
      await run(parsed.data as ParsedPayload<T>, ctx);
    };
  return Object.assign(make, { id });
}
