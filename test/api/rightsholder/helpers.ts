// Shared by the rightsholder, lens, activity and chat tests: set-up through the API itself.
import type { Test } from 'tap';
import type { Caller } from '../../helpers/principals.ts';
import { ok } from '../../helpers/outcome.ts';

export async function createRightsholder(
  t: Test,
  caller: Caller,
  name: string,
  extra: Record<string, unknown> = {},
): Promise<any> {
  return ok(
    t,
    await caller.client.mutate('rightsholder.create', {
      organizationId: caller.organizationId,
      name,
      ...extra,
    }),
    `create ${name}`,
  );
}

export async function createLens(
  t: Test,
  caller: Caller,
  fields: Record<string, unknown> = {},
): Promise<any> {
  const input = {
    organizationId: caller.organizationId,
    name: 'Top tracks',
    kind: 'query',
    payload: { measures: ['earnings'] },
    ...fields,
  };
  return ok(
    t,
    await caller.client.mutate('lens.create', input),
    `create lens ${String(input.name)}`,
  );
}

export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** Hostile strings that must be refused or stored harmlessly, never a 500. */
export const hostileStrings = [
  "'; DROP TABLE rightsholders; --",
  "x' OR '1'='1",
  '%',
  '_',
  '\\',
  'é🎵 ﷽',
  '<script>alert(1)</script>',
];

/** A JSON value nested deeper than any bound. */
export function deepJson(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}
