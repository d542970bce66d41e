// The one check of a request's JSON input, for a mutation's body and a query's `input` alike:
// valid JSON, and no key that could poison a prototype. The rule is secure-json-parse's (what
// fastify applies to bodies): a key `__proto__` anywhere, or a key `prototype` in an object held
// under a key `constructor`. JSON.parse makes such keys own properties, harmless to JSON.parse
// itself, but any later Object.assign, spread into a plain object or merge would set a prototype.
import { AppError } from '../errors.ts';

interface Visit {
  value: unknown;
  key: string | null;
  parent: Visit | null;
}

function pathOf(visit: Visit): string {
  const path: string[] = [];
  for (let v: Visit | null = visit; v && v.key !== null; v = v.parent) path.push(v.key);
  return path.reverse().join('.');
}

/** The path of the first prototype-poisoning key of a parsed JSON value (`0.payload.__proto__`), or null. */
export function poisoningKeyPath(input: unknown): string | null {
  // walked without recursion: any depth of nesting is safe
  const stack: Visit[] = [{ value: input, key: null, parent: null }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const { value } = visit;
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--)
        stack.push({ value: value[i], key: String(i), parent: visit });
      continue;
    }
    const underConstructor = visit.key === 'constructor';
    const keys = Object.keys(value);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      const child: Visit = { value: (value as Record<string, unknown>)[key], key, parent: visit };
      if (key === '__proto__' || (underConstructor && key === 'prototype')) return pathOf(child);
      stack.push(child);
    }
  }
  return null;
}

/**
 * Checks JSON text as a request carries it (`what`: "body" or "input"); throws INVALID_JSON saying
 * where. With `batchSize` (batch mode), the value must be the batch object: keyed by call index,
 * 0 to batchSize - 1 (tRPC reads those keys and would silently drop any other, so that `{"1": …}`
 * for a batch of one ran the call without its input). The text itself goes on to tRPC, which
 * parses it again.
 */
export function checkJsonText(text: string, what: 'body' | 'input', batchSize?: number): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // V8's message names the offending token and its position, and nothing else
    throw new AppError(
      'INVALID_JSON',
      `The ${what} is not valid JSON: ${(error as Error).message}`,
    );
  }
  const path = poisoningKeyPath(value);
  if (path !== null) {
    throw new AppError(
      'INVALID_JSON',
      `The ${what} holds the key ${path}: keys that could poison prototypes (__proto__ anywhere, prototype under constructor) are refused`,
    );
  }
  if (batchSize !== undefined) checkBatchKeys(value, what, batchSize);
  return value;
}

function checkBatchKeys(value: unknown, what: 'body' | 'input', batchSize: number): void {
  const expected = batchSize === 1 ? 'the key "0"' : `the keys "0" to "${batchSize - 1}"`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AppError(
      'VALIDATION_FAILED',
      `In batch mode (batch=1) the ${what} is an object keyed by call index: ${expected}, e.g. {"0": <input>}`,
    );
  }
  for (const key of Object.keys(value)) {
    if (!/^(0|[1-9][0-9]*)$/.test(key) || Number(key) >= batchSize) {
      const shown = JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key);
      throw new AppError(
        'VALIDATION_FAILED',
        `The batch ${what} has the key ${shown}, but the batch names ${batchSize} procedure${batchSize === 1 ? '' : 's'}: its keys are call indexes, ${expected}`,
      );
    }
  }
}
