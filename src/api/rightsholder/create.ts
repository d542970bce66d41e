import { withTransaction } from '../../db/pool.ts';
import { create as createRightsholder } from '../../rightsholders/service.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';
import { optionalFields, rightsholderFields } from './fields.ts';

export const create = orgProcedure(
  {
    minRole: 'writer',
    scope: 'cli',
    summary:
      'Create a rightsholder (artist, label or publisher); its name is unique in the organization, ignoring case and surrounding space.',
  },
  orgInput({
    name: rightsholderFields.name,
    legalName: optionalFields.legalName,
    aliases: optionalFields.aliases,
    ipiNameNumbers: optionalFields.ipiNameNumbers,
    isnis: optionalFields.isnis,
    streamingArtistIds: optionalFields.streamingArtistIds,
    storeArtistIds: optionalFields.storeArtistIds,
    videoChannelIds: optionalFields.videoChannelIds,
    isPublisherGroup: optionalFields.isPublisherGroup,
  }),
).mutation(({ ctx, input }) =>
  withTransaction(ctx.deps.pool, (db) =>
    createRightsholder(db, ctx.principal, ctx.org.id, {
      name: input.name,
      legalName: input.legalName ?? null,
      aliases: input.aliases ?? [],
      ipiNameNumbers: input.ipiNameNumbers ?? [],
      isnis: input.isnis ?? [],
      streamingArtistIds: input.streamingArtistIds ?? [],
      storeArtistIds: input.storeArtistIds ?? [],
      videoChannelIds: input.videoChannelIds ?? [],
      isPublisherGroup: input.isPublisherGroup ?? false,
    }),
  ),
);
