// Shared by the rightsholder, lens, activity and chat tests: error assertions and set-up through
// the API itself.
import type { Test } from 'tap';
import type { Caller } from '../../helpers/principals.ts';
import type { Outcome } from '../../helpers/trpc.ts';

/** The call failed with exactly this data.code and data.errorCode. */
export function isError(t: Test, res: Outcome<unknown>, code: string, errorCode: string, label = `${code} ${errorCode}`): void {
  if (res.ok) {
    t.fail(`${label}: expected an error, got ${JSON.stringify(res.data).slice(0, 200)}`);
    return;
  }
  t.same({ code: res.error.data.code, errorCode: res.error.data.errorCode }, { code, errorCode }, label);
}

/** The data of a call that must succeed. */
export function ok<T>(t: Test, res: Outcome<T>, label = 'call succeeds'): T {
  if (!res.ok) {
    t.fail(`${label}: ${res.error.data.errorCode}: ${res.error.message}`);
    throw new Error(`${label}: ${res.error.data.errorCode}`);
  }
  return res.data;
}

export async function createRightsholder(t: Test, caller: Caller, name: string, extra: Record<string, unknown> = {}): Promise<any> {
  return ok(t, await caller.client.mutate('rightsholder.create', { organizationId: caller.organizationId, name, ...extra }), `create ${name}`);
}

export async function createLens(t: Test, caller: Caller, fields: Record<string, unknown> = {}): Promise<any> {
  const input = { organizationId: caller.organizationId, name: 'Top tracks', kind: 'query', payload: { measures: ['earnings'] }, ...fields };
  return ok(t, await caller.client.mutate('lens.create', input), `create lens ${String(input.name)}`);
}

export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** Hostile strings that must be refused or stored harmlessly, never a 500. */
export const hostileStrings = ["'; DROP TABLE rightsholders; --", "x' OR '1'='1", '%', '_', '\\', 'é🎵 ﷽', '<script>alert(1)</script>'];

/** A JSON value nested deeper than any bound. */
export function deepJson(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}
