// The objects of an export in the object store: each attempt writes under a prefix of its own
// (attempt-<n>/, under the export's), and what an attempt, a failure or the expiry removes is
// removed by prefix.
import type { Deps } from '../deps.ts';
import { DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { exportPrefix, type ExportRow } from './store.ts';

/** The prefix of one attempt's objects, under the export's. */
export function attemptPrefix(e: Pick<ExportRow, 'organization_id' | 'id'>, attempt: number): string {
  return `${exportPrefix(e.organization_id, e.id)}attempt-${attempt}/`;
}

/** Removes every object under the prefix except the named keys. */
export async function removeObjects(deps: Pick<Deps, 'store'>, prefix: string, keep: ReadonlySet<string> = new Set()): Promise<void> {
  const { client, bucket } = deps.store;
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const o of page.Contents ?? []) {
      if (o.Key && !keep.has(o.Key)) await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: o.Key }));
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}
