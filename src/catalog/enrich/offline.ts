// The offline provider: MusicBrainz-shaped recordings shipped in fixtures/catalog/recordings.json,
// loaded once per process and indexed in memory (by ISRC, by folded title, by title word).
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { normalizeIsrc } from '../../ingest/values.ts';
import {
  artistScore,
  foldText,
  matchConfidence,
  titleKey,
  titleScore,
  type TitleKey,
} from './match.ts';
import {
  ProviderError,
  type EnrichedRecording,
  type EnrichmentProvider,
  type TrackQuery,
} from './provider.ts';
import { projectPath } from '../../paths.ts';

export const defaultDatasetPath = projectPath('fixtures', 'catalog', 'recordings.json');

/** Below this a lookup answers "not found" rather than a doubtful match. */
export const MIN_LOOKUP_CONFIDENCE = 0.6;
const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 100;

const date = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
const recordingSchema = z.strictObject({
  id: z.uuid(),
  title: z.string().min(1),
  artistCredit: z.array(z.strictObject({ name: z.string().min(1), joinphrase: z.string() })).min(1),
  isrcs: z.array(z.string().regex(/^[A-Z]{2}[A-Z0-9]{3}\d{7}$/)),
  firstReleaseDate: date.nullable(),
  release: z
    .strictObject({
      id: z.uuid(),
      title: z.string().min(1),
      artist: z.string().min(1),
      date: date.nullable(),
    })
    .nullable(),
  genres: z.array(z.string().min(1)),
  songWriters: z.array(z.string().min(1)),
  composers: z.array(z.string().min(1)),
  imageUrl: z.url().nullable(),
});
const datasetSchema = z.strictObject({
  description: z.string(),
  version: z.literal(1),
  recordings: z.array(recordingSchema),
});

export type DatasetRecording = z.infer<typeof recordingSchema>;

interface Entry {
  rec: DatasetRecording;
  artist: string;
  key: TitleKey;
}

interface Index {
  entries: Entry[];
  byIsrc: Map<string, Entry[]>;
  byBase: Map<string, Entry[]>;
  byWord: Map<string, Entry[]>;
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

export function creditName(credit: { name: string; joinphrase?: string }[]): string {
  return credit
    .map((c) => `${c.name}${c.joinphrase ?? ''}`)
    .join('')
    .trim();
}

function buildIndex(recordings: DatasetRecording[]): Index {
  const index: Index = { entries: [], byIsrc: new Map(), byBase: new Map(), byWord: new Map() };
  for (const rec of recordings) {
    const entry: Entry = { rec, artist: creditName(rec.artistCredit), key: titleKey(rec.title) };
    index.entries.push(entry);
    for (const isrc of rec.isrcs) push(index.byIsrc, isrc, entry);
    push(index.byBase, entry.key.base, entry);
    for (const w of new Set(entry.key.base.split(' ')))
      if (w.length > 1) push(index.byWord, w, entry);
  }
  return index;
}

const loaded = new Map<string, Promise<Index>>();

/** The dataset at `file`, read and checked once per process. */
function loadIndex(file: string): Promise<Index> {
  let p = loaded.get(file);
  if (!p) {
    p = (async () => {
      const parsed = datasetSchema.safeParse(JSON.parse(await readFile(file, 'utf8')));
      if (!parsed.success) {
        const where = parsed.error.issues
          .slice(0, 5)
          .map((i) => `${i.path.join('.')}: ${i.message}`);
        throw new ProviderError(`offline catalog ${file} is invalid: ${where.join('; ')}`, false);
      }
      return buildIndex(parsed.data.recordings);
    })();
    p.catch(() => loaded.delete(file));
    loaded.set(file, p);
  }
  return p;
}

interface Scored {
  entry: Entry;
  confidence: number;
  isrc: string | null;
}

function byRank(a: Scored, b: Scored): number {
  return (
    b.confidence - a.confidence ||
    (a.entry.rec.firstReleaseDate ?? '9999').localeCompare(
      b.entry.rec.firstReleaseDate ?? '9999',
    ) ||
    a.entry.rec.id.localeCompare(b.entry.rec.id)
  );
}

function toEnriched(s: Scored): EnrichedRecording {
  const { rec, artist } = s.entry;
  return {
    provider: 'offline',
    providerId: rec.id,
    title: rec.title,
    artist,
    isrc: s.isrc ?? rec.isrcs[0] ?? null,
    releaseTitle: rec.release?.title ?? null,
    releaseArtist: rec.release?.artist ?? null,
    releaseDate: rec.firstReleaseDate ?? rec.release?.date ?? null,
    genres: [...rec.genres],
    songWriters: [...rec.songWriters],
    composers: [...rec.composers],
    imageUrl: rec.imageUrl,
    confidence: s.confidence,
  };
}

function candidates(index: Index, query: TrackQuery, withFuzzy: boolean): Scored[] {
  const out = new Map<string, Scored>();
  const isrc = query.isrc ? normalizeIsrc(query.isrc) : null;
  const qKey = query.title ? titleKey(query.title) : null;
  const qArtist = query.artist && foldText(query.artist) !== '' ? query.artist : null;
  if (isrc) {
    for (const entry of index.byIsrc.get(isrc) ?? []) {
      // an ISRC names the recording; a title that disagrees entirely lowers the certainty a little
      const t = qKey && qKey.full !== '' ? titleScore(qKey, entry.key) : 1;
      out.set(entry.rec.id, { entry, confidence: t === 0 ? 0.9 : 1, isrc });
    }
  }
  if (qKey && qKey.base !== '') {
    const pool = new Set<Entry>(index.byBase.get(qKey.base) ?? []);
    if (withFuzzy)
      for (const w of new Set(qKey.base.split(' ')))
        for (const e of index.byWord.get(w) ?? []) pool.add(e);
    for (const entry of pool) {
      if (out.has(entry.rec.id)) continue;
      const t = titleScore(qKey, entry.key);
      const a = qArtist === null ? null : artistScore(qArtist, entry.artist);
      const confidence = matchConfidence(t, a);
      // without an ISRC match, never as sure as an ISRC
      if (confidence > 0)
        out.set(entry.rec.id, { entry, confidence: Math.min(confidence, 0.95), isrc: null });
    }
  }
  return [...out.values()].sort(byRank);
}

export class OfflineProvider implements EnrichmentProvider {
  readonly name = 'offline';

  constructor(private readonly datasetPath: string = defaultDatasetPath) {}

  /** Reads and indexes the dataset now rather than on the first lookup. */
  async load(): Promise<{ recordings: number }> {
    return { recordings: (await loadIndex(this.datasetPath)).entries.length };
  }

  async lookup(
    query: TrackQuery,
    options?: { signal?: AbortSignal },
  ): Promise<EnrichedRecording | null> {
    options?.signal?.throwIfAborted();
    const index = await loadIndex(this.datasetPath);
    const ranked = candidates(index, query, true);
    const best = ranked[0];
    if (!best || best.confidence < MIN_LOOKUP_CONFIDENCE) return null;
    if (best.isrc === null && (!query.artist || foldText(query.artist) === '')) {
      // a title alone names a recording only when a single artist holds it
      const artists = new Set(
        ranked.filter((s) => s.confidence === best.confidence).map((s) => foldText(s.entry.artist)),
      );
      if (artists.size > 1) return null;
    }
    return toEnriched(best);
  }

  async search(
    query: TrackQuery & { limit?: number },
    options?: { signal?: AbortSignal },
  ): Promise<EnrichedRecording[]> {
    options?.signal?.throwIfAborted();
    const index = await loadIndex(this.datasetPath);
    const limit = Math.min(Math.max(Math.trunc(query.limit ?? DEFAULT_LIMIT), 1), MAX_LIMIT);
    return candidates(index, query, true).slice(0, limit).map(toEnriched);
  }
}
