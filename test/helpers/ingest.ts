// Uploading a statement exactly as a client does: upload.uploadFile, a PUT of the bytes to the
// presigned URL, upload.uploadAction complete, then waiting for the job to finish.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { computeHeaderHash } from '../../workers/headerHash.ts';
import type { Queryable } from '../../src/db/pool.ts';
import type { LooseClient } from './trpc.ts';

export async function createRightsholder(
  client: LooseClient,
  organizationId: string,
  name: string,
): Promise<string> {
  const res = await client.mutate('rightsholder.create', { organizationId, name });
  if (!res.ok) throw new Error(`rightsholder.create: ${JSON.stringify(res.error)}`);
  return res.data.id as string;
}

export interface Uploaded {
  uploadId: string;
  statementId: string;
}

export async function putFile(
  client: LooseClient,
  organizationId: string,
  rightsholderId: string,
  fileName: string,
  bytes: Buffer,
  extra: Record<string, unknown> = {},
): Promise<Uploaded> {
  const start = await client.mutate('upload.uploadFile', {
    organizationId,
    rightsholderId,
    fileName,
    size: bytes.length,
    ...extra,
  });
  if (!start.ok) throw new Error(`upload.uploadFile: ${JSON.stringify(start.error)}`);
  const put = await fetch(start.data.url, {
    method: 'PUT',
    headers: start.data.headers,
    body: bytes,
  });
  if (put.status !== 200) throw new Error(`PUT ${put.status}: ${await put.text()}`);
  const done = await client.mutate('upload.uploadAction', {
    organizationId,
    action: { type: 'complete', statementId: start.data.statementId },
  });
  if (!done.ok) throw new Error(`complete: ${JSON.stringify(done.error)}`);
  return { uploadId: start.data.uploadId, statementId: start.data.statementId };
}

export async function uploadFixture(
  client: LooseClient,
  organizationId: string,
  rightsholderId: string,
  file: string,
): Promise<Uploaded> {
  return putFile(client, organizationId, rightsholderId, path.basename(file), await readFile(file));
}

const SETTLED = new Set([
  'processed',
  'needs_mapping',
  'failed',
  'skipped',
  'bad',
  'aborted',
  'expired',
  'deleted',
]);

/** Polls until the statement leaves uploaded/processing; returns its record. */
export async function waitForStatement(
  client: LooseClient,
  organizationId: string,
  statementId: string,
  ms = 60_000,
): Promise<any> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await client.mutate('upload.statements', {
      organizationId,
      filter: { statementIds: [statementId], includeDeleted: true },
    });
    if (!res.ok) throw new Error(`upload.statements: ${JSON.stringify(res.error)}`);
    const item = res.data.items[0];
    if (item && SETTLED.has(item.status)) return item;
    if (Date.now() > deadline)
      throw new Error(`statement ${statementId} still ${item?.status} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The fields of a monthly US-dollar layout with `Period`, `Net` and `Qty` columns (a mapping's). */
export const MONTHLY_USD_FIELDS = {
  stmtYear: { column: 'Period' },
  stmtPeriod: { column: 'Period' },
  stmtCadence: { constant: 'M' },
  currency: { constant: 'USD' },
  royaltyEarnings: { column: 'Net' },
  units: { column: 'Qty' },
};

/** An organization's own mapping for a header, stored as mapping.create stores one; its id. */
export async function insertMapping(
  db: Queryable,
  organizationId: string,
  name: string,
  header: string[],
  fields: Record<string, unknown>,
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO mappings (organization_id, name, headers, header_hash, fields) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
    [organizationId, name, header, computeHeaderHash(header), JSON.stringify(fields)],
  );
  return rows[0]!.id;
}
