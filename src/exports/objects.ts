// The objects of an export in the object store: each attempt writes under a prefix of its own
// (attempt-<n>/, under the export's), and what an attempt, a failure or the expiry removes is
// removed by prefix.
import type { Deps } from '../deps.ts';
import { exportPrefix, type ExportRow } from './store.ts';

/** The prefix of one attempt's objects, under the export's. */
export function attemptPrefix(
  e: Pick<ExportRow, 'organization_id' | 'id'>,
  attempt: number,
): string {
  return `${exportPrefix(e.organization_id, e.id)}attempt-${attempt}/`;
}

/** Removes every object under the prefix except the named keys. */
export async function removeObjects(
  deps: Pick<Deps, 'store'>,
  prefix: string,
  keep: ReadonlySet<string> = new Set(),
): Promise<void> {
  await deps.store.deletePrefix(prefix, keep);
}
