// The MusicBrainz provider: the web service v2 in its JSON format (https://musicbrainz.org/doc/
// MusicBrainz_API). Lookup by ISRC (`/ws/2/isrc/<isrc>`), else a Lucene search of recordings by
// title and artist (`/ws/2/recording?query=`), then the chosen recording with its genres and
// its works' writers (`/ws/2/recording/<mbid>?inc=…+work-rels+work-level-rels+artist-rels`).
// Their rules are honoured: a meaningful User-Agent on every request and at most one request per
// interval per process (https://musicbrainz.org/doc/MusicBrainz_API/Rate_Limiting).
import { z } from 'zod';
import { normalizeIsrc } from '../../ingest/values.ts';
import {
  artistScore,
  foldText,
  fullDate,
  matchConfidence,
  round,
  titleKey,
  titleScore,
} from './match.ts';
import { MIN_LOOKUP_CONFIDENCE } from './offline.ts';
import {
  ProviderError,
  type EnrichedRecording,
  type EnrichmentProvider,
  type TrackQuery,
} from './provider.ts';
import { readCappedBody } from '../../net/cappedBody.ts';

export interface MusicBrainzSettings {
  /** e.g. https://musicbrainz.org (no trailing slash) */
  baseUrl: string;
  /** `Application/version ( contact )` */
  userAgent: string;
  /** at least this long between two requests of this process to the same server */
  minIntervalMs: number;
  /** per request, from sending it to the end of the body */
  timeoutMs: number;
  /** the most a body may hold (default MAX_BODY_BYTES): a larger answer is refused, not read into memory */
  maxBodyBytes?: number;
}

/** A search of 100 recordings with their releases is a few hundred KB; nothing it answers comes near this. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** The body as text, refused (with the stream cancelled) once it passes `max` bytes. */
async function cappedText(res: Response, max: number): Promise<string> {
  const body = await readCappedBody(res, max, (declared) =>
    declared !== null
      ? new ProviderError(
          `MusicBrainz answered with ${declared} bytes, more than the ${max} a response may hold`,
          false,
        )
      : new ProviderError(
          `MusicBrainz answered with more than the ${max} bytes a response may hold`,
          false,
        ),
  );
  return body.toString('utf8');
}

const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 100;
const LOOKUP_INC =
  'artist-credits+releases+isrcs+genres+tags+work-rels+work-level-rels+artist-rels';

// --- the response format (only what is read; everything else passes) -----------------------------

const artistCredit = z.array(
  z.looseObject({ name: z.string(), joinphrase: z.string().optional() }),
);
const named = z.looseObject({ name: z.string(), count: z.number().optional() });
const release = z.looseObject({
  id: z.string(),
  title: z.string(),
  status: z.string().nullish(),
  date: z.string().nullish(),
  'artist-credit': artistCredit.optional(),
  'cover-art-archive': z.looseObject({ front: z.boolean().optional() }).optional(),
});
const artistRel = z.looseObject({
  type: z.string(),
  'target-type': z.string().optional(),
  artist: z.looseObject({ name: z.string() }).optional(),
});
const recording = z.looseObject({
  id: z.string(),
  score: z.number().optional(),
  title: z.string(),
  'artist-credit': artistCredit.optional(),
  'first-release-date': z.string().nullish(),
  releases: z.array(release).optional(),
  isrcs: z.array(z.string()).optional(),
  genres: z.array(named).optional(),
  tags: z.array(named).optional(),
  relations: z
    .array(
      z.looseObject({
        type: z.string(),
        'target-type': z.string().optional(),
        artist: z.looseObject({ name: z.string() }).optional(),
        work: z
          .looseObject({ title: z.string().optional(), relations: z.array(artistRel).optional() })
          .optional(),
      }),
    )
    .optional(),
});
type MbRecording = z.infer<typeof recording>;
const isrcAnswer = z.looseObject({ isrc: z.string().optional(), recordings: z.array(recording) });
const searchAnswer = z.looseObject({
  count: z.number().optional(),
  recordings: z.array(recording),
});

// --- the per-process request spacing ---------------------------------------------------------------

/**
 * One queue per server for the whole process: every provider instance shares it. Requests go
 * one at a time, each at least the interval after the previous one was answered, so the server
 * never sees two closer than the interval whatever the network does.
 */
class RequestSpacer {
  private tail: Promise<void> = Promise.resolve();
  private readyAt = 0;
  constructor(private readonly intervalMs: number) {}

  /**
   * Waits for this caller's turn (in call order); call the returned function once answered. A
   * pause the server asked for that is longer than `maxWaitMs` is not waited out: the caller gets
   * a retryable ProviderError with the time left, at once (the enrichment queue retries after it).
   */
  async turn(signal: AbortSignal | undefined, maxWaitMs = Infinity): Promise<() => void> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    try {
      await abortable(previous, signal);
      const wait = this.readyAt - performance.now();
      if (wait > Math.max(maxWaitMs, this.intervalMs)) {
        throw new ProviderError(
          `MusicBrainz asked for a pause (${Math.ceil(wait / 1000)} s left)`,
          true,
          Math.ceil(wait),
        );
      }
      if (wait > 0) await sleep(wait, signal);
    } catch (error) {
      // give up the turn without letting the next caller jump ahead of the previous one
      void previous.then(release);
      throw error;
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.readyAt = Math.max(this.readyAt, performance.now() + this.intervalMs);
      release();
    };
  }

  /** The server asked for a pause (503/429 with Retry-After). */
  pause(ms: number): void {
    this.readyAt = Math.max(this.readyAt, performance.now() + ms);
  }
}

function abortable(p: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, reject);
  });
}

const spacers = new Map<string, RequestSpacer>();
function spacerFor(baseUrl: string, intervalMs: number): RequestSpacer {
  const key = `${new URL(baseUrl).origin}\u001f${intervalMs}`;
  let s = spacers.get(key);
  if (!s) spacers.set(key, (s = new RequestSpacer(intervalMs)));
  return s;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Retry-After as delay-seconds or an HTTP date, in milliseconds. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const v = header.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

// --- Lucene query text -----------------------------------------------------------------------------

/** Escapes every character the Lucene query syntax gives a meaning to, inside a phrase. */
export function escapeLucene(text: string): string {
  return text.replace(/[+\-&|!(){}[\]^"~*?:\\/]/g, (c) => `\\${c}`);
}

function phrase(field: string, value: string): string {
  // control characters cannot mean anything in a title; collapse white space so the phrase stays one line
  const clean = value.replace(/[\p{Cc}\s]+/gu, ' ').trim();
  return `${field}:"${escapeLucene(clean)}"`;
}

export function recordingQuery(q: {
  isrc: string | null;
  title: string | null;
  artist: string | null;
}): string | null {
  const text: string[] = [];
  if (q.title && q.title.trim() !== '') {
    text.push(phrase('recording', q.title));
    if (q.artist && q.artist.trim() !== '') text.push(phrase('artist', q.artist));
  }
  const joined = text.join(' AND ');
  // the ISRC was checked against its pattern before it gets here: letters and digits only
  if (q.isrc && joined !== '') return `isrc:${q.isrc} OR (${joined})`;
  if (q.isrc) return `isrc:${q.isrc}`;
  return joined === '' ? null : joined;
}

// --- the answer as an enriched recording -----------------------------------------------------------

export function creditText(credit: { name: string; joinphrase?: string }[] | undefined): string {
  return (credit ?? [])
    .map((c) => `${c.name}${c.joinphrase ?? ''}`)
    .join('')
    .trim();
}

/** The release the catalog shows: the earliest official one, else the earliest. */
function mainRelease(rec: MbRecording): z.infer<typeof release> | null {
  const releases = [...(rec.releases ?? [])];
  releases.sort(
    (a, b) =>
      Number(b.status === 'Official') - Number(a.status === 'Official') ||
      (fullDate(a.date) ?? '9999').localeCompare(fullDate(b.date) ?? '9999') ||
      a.id.localeCompare(b.id),
  );
  return releases[0] ?? null;
}

function names(list: { name: string; count?: number | undefined }[] | undefined): string[] {
  return [...(list ?? [])]
    .sort((a, b) => (b.count ?? 0) - (a.count ?? 0) || a.name.localeCompare(b.name))
    .map((g) => g.name);
}

function writers(rec: MbRecording): { songWriters: string[]; composers: string[] } {
  const songWriters = new Set<string>();
  const composers = new Set<string>();
  const take = (type: string, name: string | undefined): void => {
    if (!name) return;
    if (type === 'composer') composers.add(name);
    else if (type === 'writer' || type === 'lyricist' || type === 'librettist')
      songWriters.add(name);
  };
  for (const rel of rec.relations ?? []) {
    if (rel['target-type'] === 'artist') take(rel.type, rel.artist?.name);
    if (rel['target-type'] === 'work')
      for (const w of rel.work?.relations ?? [])
        if (w['target-type'] === 'artist') take(w.type, w.artist?.name);
  }
  return { songWriters: [...songWriters], composers: [...composers] };
}

function toEnriched(rec: MbRecording, confidence: number, isrc: string | null): EnrichedRecording {
  const rel = mainRelease(rec);
  const artist = creditText(rec['artist-credit']);
  const genres = names(rec.genres);
  return {
    provider: 'musicbrainz',
    providerId: rec.id,
    title: rec.title,
    artist,
    isrc: isrc ?? rec.isrcs?.[0] ?? null,
    releaseTitle: rel?.title ?? null,
    releaseArtist: rel ? creditText(rel['artist-credit']) || artist || null : null,
    releaseDate: fullDate(rec['first-release-date']) ?? fullDate(rel?.date),
    genres,
    ...writers(rec),
    imageUrl:
      rel && rel['cover-art-archive']?.front
        ? `https://coverartarchive.org/release/${rel.id}/front-250`
        : null,
    confidence,
  };
}

/** How well a MusicBrainz candidate answers the query, 0..1 (its own score caps ours). */
function scoreCandidate(query: TrackQuery, isrc: string | null, rec: MbRecording): number {
  if (isrc && rec.isrcs?.includes(isrc)) return 1;
  if (!query.title) return 0;
  const t = titleScore(titleKey(query.title), titleKey(rec.title));
  const a =
    query.artist && foldText(query.artist) !== ''
      ? artistScore(query.artist, creditText(rec['artist-credit']))
      : null;
  const mine = Math.min(matchConfidence(t, a), 0.95);
  return round(Math.min(mine, (rec.score ?? 100) / 100));
}

function rankBy(scores: Map<MbRecording, number>) {
  return (a: MbRecording, b: MbRecording): number =>
    scores.get(b)! - scores.get(a)! ||
    (fullDate(a['first-release-date']) ?? '9999').localeCompare(
      fullDate(b['first-release-date']) ?? '9999',
    ) ||
    a.id.localeCompare(b.id);
}

// --- the provider ----------------------------------------------------------------------------------

export class MusicBrainzProvider implements EnrichmentProvider {
  readonly name = 'musicbrainz';
  private readonly spacer: RequestSpacer;
  private readonly base: string;

  constructor(private readonly settings: MusicBrainzSettings) {
    this.base = settings.baseUrl.replace(/\/+$/, '');
    this.spacer = spacerFor(this.base, settings.minIntervalMs);
  }

  async lookup(
    query: TrackQuery,
    options?: { signal?: AbortSignal },
  ): Promise<EnrichedRecording | null> {
    const signal = options?.signal;
    const isrc = query.isrc ? normalizeIsrc(query.isrc) : null;
    let chosen: { id: string; confidence: number; isrc: string | null } | null = null;
    if (isrc) {
      const answer = await this.get(
        `/ws/2/isrc/${isrc}`,
        { inc: 'artist-credits+releases' },
        isrcAnswer,
        signal,
      );
      if (answer && answer.recordings.length > 0) {
        const key = query.title ? titleKey(query.title) : null;
        const scores = new Map(
          answer.recordings.map(
            (r) => [r, key && key.full !== '' ? titleScore(key, titleKey(r.title)) : 1] as const,
          ),
        );
        const best = [...answer.recordings].sort(rankBy(scores))[0]!;
        chosen = { id: best.id, confidence: scores.get(best) === 0 ? 0.9 : 1, isrc };
      }
    }
    if (!chosen && query.title && query.title.trim() !== '') {
      const ranked = await this.candidates(
        { isrc: null, title: query.title, artist: query.artist },
        5,
        signal,
      );
      const best = ranked[0];
      if (best && best.confidence >= MIN_LOOKUP_CONFIDENCE) {
        const titleOnly = !query.artist || foldText(query.artist) === '';
        const tied = ranked
          .filter((c) => c.confidence === best.confidence)
          .map((c) => foldText(creditText(c.rec['artist-credit'])));
        if (!titleOnly || new Set(tied).size === 1)
          chosen = { id: best.rec.id, confidence: best.confidence, isrc: null };
      }
    }
    if (!chosen) return null;
    const detail = await this.get(
      `/ws/2/recording/${encodeURIComponent(chosen.id)}`,
      { inc: LOOKUP_INC },
      recording,
      signal,
    );
    return detail ? toEnriched(detail, chosen.confidence, chosen.isrc) : null;
  }

  async search(
    query: TrackQuery & { limit?: number },
    options?: { signal?: AbortSignal },
  ): Promise<EnrichedRecording[]> {
    const limit = Math.min(Math.max(Math.trunc(query.limit ?? DEFAULT_LIMIT), 1), MAX_LIMIT);
    const isrc = query.isrc ? normalizeIsrc(query.isrc) : null;
    const ranked = await this.candidates(
      { isrc, title: query.title, artist: query.artist },
      limit,
      options?.signal,
    );
    return ranked.map((c) =>
      toEnriched(c.rec, c.confidence, isrc && c.rec.isrcs?.includes(isrc) ? isrc : null),
    );
  }

  private async candidates(
    query: TrackQuery,
    limit: number,
    signal: AbortSignal | undefined,
  ): Promise<{ rec: MbRecording; confidence: number }[]> {
    const q = recordingQuery(query);
    if (q === null) return [];
    const answer = await this.get(
      '/ws/2/recording',
      { query: q, limit: String(limit) },
      searchAnswer,
      signal,
    );
    const recs = answer?.recordings ?? [];
    const scores = new Map(recs.map((r) => [r, scoreCandidate(query, query.isrc, r)] as const));
    return recs
      .filter((r) => scores.get(r)! > 0)
      .sort(rankBy(scores))
      .slice(0, limit)
      .map((rec) => ({ rec, confidence: scores.get(rec)! }));
  }

  /** One request in this process's turn; null for 404 (the entity does not exist). */
  private async get<T extends z.ZodType>(
    path: string,
    params: Record<string, string>,
    schema: T,
    signal: AbortSignal | undefined,
  ): Promise<z.infer<T> | null> {
    const { status, body, retryAfter } = await this.request(path, params, signal);
    if (status === 404) return null;
    refuseFailedStatus(status, body, retryAfter);
    return parsedAnswer(path, body, schema);
  }

  /**
   * Sends the request when this process's turn comes and reads the body (capped); a pause the
   * server asks for delays the next turn. Not answering in time and being unreachable are
   * retryable ProviderErrors; the caller's own abort is rethrown as it is.
   */
  private async request(
    path: string,
    params: Record<string, string>,
    signal: AbortSignal | undefined,
  ): Promise<{ status: number; body: string; retryAfter: string | null }> {
    const answered = await this.spacer.turn(signal, this.settings.timeoutMs);
    const url = new URL(this.base + path);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    url.searchParams.set('fmt', 'json');
    const timeout = AbortSignal.timeout(this.settings.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      let res: Response;
      let retryAfter: string | null;
      try {
        res = await fetch(url, {
          headers: { 'User-Agent': this.settings.userAgent, Accept: 'application/json' },
          signal: combined,
        });
        retryAfter = res.headers.get('retry-after');
        // the pause the server asks for applies to the very next request
        const wait =
          res.status === 503 || res.status === 429 ? retryAfterMs(retryAfter) : undefined;
        if (wait !== undefined) this.spacer.pause(wait);
      } finally {
        answered();
      }
      const body = await cappedText(res, this.settings.maxBodyBytes ?? MAX_BODY_BYTES);
      return { status: res.status, body, retryAfter };
    } catch (error) {
      if (error instanceof ProviderError) throw error;
      if (signal?.aborted) throw signal.reason;
      if (timeout.aborted)
        throw new ProviderError(
          `MusicBrainz did not answer within ${this.settings.timeoutMs} ms`,
          true,
          undefined,
          { cause: error },
        );
      throw new ProviderError(
        `MusicBrainz is unreachable: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`,
        true,
        undefined,
        { cause: error },
      );
    }
  }
}

/** Throws for an answer other than 200: busy and server failures are retryable, the rest not. */
function refuseFailedStatus(status: number, body: string, retryAfter: string | null): void {
  if (status === 503 || status === 429) {
    throw new ProviderError(`MusicBrainz is busy (HTTP ${status})`, true, retryAfterMs(retryAfter));
  }
  if (status >= 500)
    throw new ProviderError(`MusicBrainz failed (HTTP ${status})`, true, retryAfterMs(retryAfter));
  if (status !== 200)
    throw new ProviderError(
      `MusicBrainz refused the request (HTTP ${status}): ${errorText(body)}`,
      false,
    );
}

/** The body as JSON checked against the expected shape; either failing is not retryable. */
function parsedAnswer<T extends z.ZodType>(path: string, body: string, schema: T): z.infer<T> {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new ProviderError(`MusicBrainz answered ${path} with malformed JSON`, false);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ProviderError(
      `MusicBrainz answered ${path} in an unexpected shape (${issue?.path.join('.') ?? ''}: ${issue?.message ?? ''})`,
      false,
    );
  }
  return parsed.data;
}

function errorText(body: string): string {
  try {
    const e = (JSON.parse(body) as { error?: unknown }).error;
    if (typeof e === 'string') return e.slice(0, 300);
  } catch {
    // not JSON: the start of the text
  }
  return body.slice(0, 300);
}
