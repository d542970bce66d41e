// The enrichment provider interface: what the catalog asks of a source of recording metadata
// (the offline dataset or MusicBrainz), and the one error a provider throws.

export interface TrackQuery {
  isrc: string | null;
  title: string | null;
  artist: string | null;
}

export interface EnrichedRecording {
  provider: string;
  providerId: string;
  title: string;
  artist: string;
  isrc: string | null;
  releaseTitle: string | null;
  releaseArtist: string | null;
  /** YYYY-MM-DD; a year or year-month only date is completed with 01 */
  releaseDate: string | null;
  genres: string[];
  songWriters: string[];
  composers: string[];
  imageUrl: string | null;
  /** 0..1: how sure the provider is that this is the queried track */
  confidence: number;
}

export interface EnrichmentProvider {
  /** 'offline' | 'musicbrainz' */
  readonly name: string;
  /** The best match, or null when the provider does not know the track. */
  lookup(query: TrackQuery, options?: { signal?: AbortSignal }): Promise<EnrichedRecording | null>;
  /** Candidates, best first. */
  search(
    query: TrackQuery & { limit?: number },
    options?: { signal?: AbortSignal },
  ): Promise<EnrichedRecording[]>;
}

/**
 * A provider could not answer. `retryable` says whether the same question may succeed later
 * (rate limit, outage, network, timeout) or never will (a refused request, an unreadable answer);
 * `retryAfterMs` is the provider's own hint (Retry-After), when it gave one.
 */
export class ProviderError extends Error {
  override name = 'ProviderError';
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
