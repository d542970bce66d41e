// The configured enrichment provider (config.enrichment): the offline dataset by default, or
// MusicBrainz. The catalog's jobs and musicEnrichment.query ask it through this one function.
import type { Config } from '../../config.ts';
import { MusicBrainzProvider } from './musicbrainz.ts';
import { OfflineProvider } from './offline.ts';
import type { EnrichmentProvider } from './provider.ts';

export type { EnrichmentProvider } from './provider.ts';

export function createProvider(config: Config): EnrichmentProvider {
  const e = config.enrichment;
  if (e.provider === 'musicbrainz') {
    return new MusicBrainzProvider({
      baseUrl: e.musicbrainz.baseUrl,
      userAgent: e.musicbrainz.userAgent,
      minIntervalMs: e.musicbrainz.minIntervalMs,
      timeoutMs: e.timeoutMs,
    });
  }
  return new OfflineProvider();
}
