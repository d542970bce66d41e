import { z } from 'zod';
import { expireDueUploads } from '../../ingest/statementStatus.ts';
import { extendUploads } from '../../ingest/uploadStore.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { storedId } from './inputs.ts';
import { UPLOAD_TTL_SECONDS } from './uploadFile.ts';

export const heartbeat = orgProcedure(
  {
    minRole: 'writer',
    scope: '',
    summary:
      'Extend the time-to-live of direct uploads still in progress (status uploading, TTL not run out: an upload past it is expired); each extended one comes with a fresh presigned PUT (url, method, headers) living as long, for a client that has not finished its PUT.',
  },
  orgInput({ statementIds: z.array(storedId()).min(1).max(1000) }),
).mutation(async ({ ctx, input }) => {
  // a heartbeat after the TTL does not bring an upload back: it is expired (its PUT URL is dead too)
  await expireDueUploads(ctx.deps.pool, {
    organizationId: ctx.org.id,
    statementIds: input.statementIds,
  });
  const rows = await extendUploads(ctx.deps.pool, ctx.org, input.statementIds, UPLOAD_TTL_SECONDS);
  const extended = new Map(
    await Promise.all(
      rows.map(async (r) => {
        const url = await ctx.deps.store.presignPut(
          r.objectKey,
          r.contentType,
          UPLOAD_TTL_SECONDS,
          r.size === null ? null : Number(r.size),
        );
        return [
          r.id,
          {
            statementId: r.id,
            expiresAt: r.expiresAt,
            url,
            method: 'PUT' as const,
            headers: { 'content-type': r.contentType },
          },
        ] as const;
      }),
    ),
  );
  const ids = [...new Set(input.statementIds)];
  return {
    extended: ids.filter((id) => extended.has(id)).map((id) => extended.get(id)!),
    notExtended: ids.filter((id) => !extended.has(id)),
  };
});
