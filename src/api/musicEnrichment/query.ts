import { z } from 'zod';
import { plainText } from '../../activity/inputs.ts';
import { createProvider } from '../../catalog/enrich/index.ts';
import { ProviderError } from '../../catalog/enrich/provider.ts';
import { AppError } from '../../errors.ts';
import { orgProcedure } from '../../trpc/procedure.ts';
import { orgInput } from '../../trpc/schemas.ts';

export const query = orgProcedure(
  {
    minRole: 'admin',
    scope: 'admin',
    summary:
      'Ask the configured music data provider (offline dataset or MusicBrainz) for candidate recordings by ISRC and/or title and artist: { provider, candidates: [{ provider, providerId, title, artist, isrc, releaseTitle, releaseArtist, releaseDate, genres, songWriters, composers, imageUrl, confidence }] }, best first; limit 1..50 (default 10).',
  },
  orgInput({
    isrc: plainText(50).trim().min(1).optional(),
    title: plainText(500).trim().min(1).optional(),
    artist: plainText(500).trim().min(1).optional(),
    limit: z.number().int().min(1).max(50).default(10),
  }).refine((i) => i.isrc !== undefined || i.title !== undefined, {
    message: 'isrc or title is required',
    path: ['title'],
  }),
).query(async ({ ctx, input }) => {
  const provider = createProvider(ctx.deps.config);
  try {
    const candidates = await provider.search(
      {
        isrc: input.isrc ?? null,
        title: input.title ?? null,
        artist: input.artist ?? null,
        limit: input.limit,
      },
      { signal: AbortSignal.timeout(ctx.deps.config.enrichment.timeoutMs) },
    );
    return { provider: provider.name, candidates: candidates.slice(0, input.limit) };
  } catch (error) {
    if (error instanceof ProviderError || (error as Error).name === 'TimeoutError') {
      throw new AppError(
        'ENRICHMENT_PROVIDER_FAILED',
        `The ${provider.name} provider failed: ${(error as Error).message}`,
        { cause: error },
      );
    }
    throw error;
  }
});
