// Text embeddings for the vector entries. The built-in one needs no model: character bigrams and
// trigrams and whole words, hashed (FNV-1a, signed) into a fixed-size vector, L2-normalized, so
// cosine similarity is a dot product and misspellings stay close ("Spotfy" ~ "Spotify").
import { normalizeLookupKey } from '../lookups/normalize.ts';
import { AppError } from '../errors.ts';
import type { AiSettings } from '../config.ts';
import { readCappedBody } from '../net/cappedBody.ts';

export const BUILTIN_DIMENSIONS = 256;
export const BUILTIN_EMBEDDING_MODEL = `hashed-ngram-v1-${BUILTIN_DIMENSIONS}`;

export interface Embedder {
  /** stored with each vector, so vectors of another model are recomputed rather than compared */
  readonly model: string;
  embed(texts: string[]): Promise<number[][]>;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function features(text: string): string[] {
  const key = normalizeLookupKey(text);
  const out: string[] = [];
  for (const word of key.split(' ')) {
    if (!word) continue;
    out.push(`w:${word}`);
    const padded = ` ${word} `;
    for (let i = 0; i + 2 <= padded.length; i++) out.push(`b:${padded.slice(i, i + 2)}`);
    for (let i = 0; i + 3 <= padded.length; i++) out.push(`t:${padded.slice(i, i + 3)}`);
  }
  // the words run together as well, so "sound cloud" meets "soundcloud"
  const joined = ` ${key.replace(/ /g, '')} `;
  for (let i = 0; i + 3 <= joined.length; i++) out.push(`j:${joined.slice(i, i + 3)}`);
  return out;
}

export function hashedNgramEmbedding(text: string, dimensions = BUILTIN_DIMENSIONS): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const feature of features(text)) {
    const h = fnv1a(feature);
    vector[h % dimensions]! += h & 0x80000000 ? -1 : 1;
  }
  const norm = Math.sqrt(vector.reduce((sum, v) => sum + v * v, 0));
  // float4 storage: round here so a stored vector compares equal to a fresh one
  return norm === 0 ? vector : vector.map((v) => Math.fround(v / norm));
}

export function cosine(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

export const builtinEmbedder: Embedder = {
  model: BUILTIN_EMBEDDING_MODEL,
  async embed(texts) {
    return texts.map((t) => hashedNgramEmbedding(t));
  },
};

const FLOAT4_MAX = 3.4028234663852886e38;

/** An embedding as float4 storage keeps it: a non-empty list of finite numbers a float4 can hold. */
function float4Embedding(value: unknown): number[] {
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    !value.every((v) => typeof v === 'number' && Number.isFinite(v) && Math.abs(v) <= FLOAT4_MAX)
  ) {
    throw new AppError(
      'AI_PROVIDER_FAILED',
      'The embedding endpoint answered an embedding that is not a list of numbers a float4 can hold',
    );
  }
  return value.map((v: number) => Math.fround(v));
}

/**
 * The embeddings of an /embeddings answer in input order: one object per input, each with its
 * `index` (a permutation of 0..n-1) or, when no item has one, in the order given; all of one size.
 */
export function embeddingsOf(body: unknown, count: number): number[][] {
  const data =
    typeof body === 'object' && body !== null ? (body as { data?: unknown }).data : undefined;
  if (
    !Array.isArray(data) ||
    data.length !== count ||
    !data.every((item) => typeof item === 'object' && item !== null && !Array.isArray(item))
  ) {
    throw new AppError(
      'AI_PROVIDER_FAILED',
      'The embedding endpoint answered without one embedding per input',
    );
  }
  const items = data as { index?: unknown; embedding?: unknown }[];
  const indexed = items.some((item) => item.index !== undefined);
  const ordered: (number[] | undefined)[] = indexed
    ? new Array(count)
    : items.map((item) => float4Embedding(item.embedding));
  if (indexed) {
    for (const item of items) {
      const index = item.index;
      if (
        typeof index !== 'number' ||
        !Number.isInteger(index) ||
        index < 0 ||
        index >= count ||
        ordered[index] !== undefined
      ) {
        throw new AppError(
          'AI_PROVIDER_FAILED',
          'The embedding endpoint answered indexes that are not one per input',
        );
      }
      ordered[index] = float4Embedding(item.embedding);
    }
  }
  const embeddings = ordered as number[][];
  if (embeddings.some((e) => e.length !== embeddings[0]!.length)) {
    throw new AppError(
      'AI_PROVIDER_FAILED',
      'The embedding endpoint answered embeddings of different sizes',
    );
  }
  return embeddings;
}

/** POST {base}/embeddings of an OpenAI-compatible API; `signal` (a call's time budget) cuts its requests short. */
export function openAiEmbedder(
  settings: AiSettings & { baseUrl: string; embeddingModel: string },
  signal?: AbortSignal,
): Embedder {
  return {
    model: `openai:${settings.embeddingModel}`,
    async embed(texts) {
      if (texts.length === 0) return [];
      const body = await postJson(
        settings,
        '/embeddings',
        { model: settings.embeddingModel, input: texts.map((t) => normalizeLookupKey(t)) },
        signal,
      );
      return embeddingsOf(body, texts.length);
    },
  };
}

export function createEmbedder(
  settings: AiSettings,
  opts: { signal?: AbortSignal } = {},
): Embedder {
  if (settings.provider === 'openai' && settings.baseUrl && settings.embeddingModel) {
    return openAiEmbedder(
      { ...settings, baseUrl: settings.baseUrl, embeddingModel: settings.embeddingModel },
      opts.signal,
    );
  }
  return builtinEmbedder;
}

/**
 * The most an answer of the AI provider may hold: 100 embeddings (the chunk vector entries are
 * embedded in) of 3,072 dimensions as pretty-printed JSON are under 8 MB; a chat completion is far
 * smaller. A larger answer is refused once that much has arrived, not read into memory.
 */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/** The body as text, refused (with the stream cancelled) once it passes `max` bytes. */
async function cappedText(res: Response, max: number, path: string): Promise<string> {
  const body = await readCappedBody(
    res,
    max,
    () =>
      new AppError(
        'AI_PROVIDER_FAILED',
        `The AI provider answered more than the ${max} bytes an answer may hold (${path})`,
      ),
  );
  // decoded as Response.text() decodes (a leading byte-order mark dropped)
  return new TextDecoder().decode(body);
}

/**
 * One JSON POST to the OpenAI-compatible API, with the configured timeout and key; `signal` (the
 * time budget of the whole call it is part of) aborts it sooner.
 */
export async function postJson(
  settings: Pick<AiSettings, 'apiKey' | 'timeoutMs'> & { baseUrl: string },
  path: string,
  payload: unknown,
  signal?: AbortSignal,
): Promise<unknown> {
  const timeout = AbortSignal.timeout(settings.timeoutMs);
  let res: Response;
  try {
    res = await fetch(`${settings.baseUrl}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}),
      },
      body: JSON.stringify(payload),
      signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
    });
  } catch (error) {
    throw new AppError('AI_PROVIDER_FAILED', `The AI provider could not be reached (${path})`, {
      cause: error,
    });
  }
  let text: string;
  try {
    // the timeout covers the body too: an answer that stalls after its headers is a failure, not a hang
    text = await cappedText(res, MAX_ANSWER_BYTES, path);
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError(
      'AI_PROVIDER_FAILED',
      `The AI provider's answer could not be read (${path})`,
      { cause: error },
    );
  }
  if (!res.ok)
    throw new AppError(
      'AI_PROVIDER_FAILED',
      `The AI provider answered HTTP ${res.status} (${path})`,
      { cause: new Error(text.slice(0, 2000)) },
    );
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new AppError(
      'AI_PROVIDER_FAILED',
      `The AI provider answered something that is not JSON (${path})`,
      { cause: error },
    );
  }
}
