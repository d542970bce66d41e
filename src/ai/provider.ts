// Resolution "with AI" behind one small interface. The built-in provider answers with the offline
// resolver's result; the OpenAI provider asks an OpenAI-compatible chat-completions endpoint
// (POST {base}/chat/completions, JSON response format), grounded with the offline candidates and,
// for sales types, the taxonomy, and checks the answer before anyone may save it.
import { z } from 'zod';
import type { AiSettings } from '../config.ts';
import { AppError } from '../errors.ts';
import type { Resolution, SalesTypeProposal } from '../lookups/offlineResolver.ts';
import type { TaxonomyRow } from '../lookups/salesTypes.ts';
import type { SourceResolution } from '../lookups/sources.ts';
import { postJson } from './embedding.ts';

export interface SourceQuestion {
  raw: string;
  normalized: string;
  /** what the built-in resolver found */
  offline: Resolution<SourceResolution>;
  /** gold-data rows the string resembles, most specific first */
  candidates: { label: string; resolution: SourceResolution }[];
}

export interface SalesTypeQuestion {
  raw: string;
  normalized: string;
  offline: Resolution<SalesTypeProposal>;
  taxonomy: TaxonomyRow[];
}

export interface AiProvider {
  readonly name: 'builtin' | 'openai';
  resolveSource(q: SourceQuestion): Promise<Resolution<SourceResolution>>;
  resolveSalesType(q: SalesTypeQuestion): Promise<Resolution<SalesTypeProposal>>;
}

export const builtinProvider: AiProvider = {
  name: 'builtin',
  async resolveSource(q) {
    return q.offline;
  },
  async resolveSalesType(q) {
    return q.offline;
  },
};

const nullableName = z
  .string()
  .trim()
  .max(200)
  .nullish()
  .transform((v) => (v ? v : null));
const confidence = z.number().min(0).max(1);

const sourceAnswer = z.object({
  collectionSource: nullableName,
  earningsSource: nullableName,
  earningsCategory: nullableName,
  earningsParentCompany: nullableName,
  publisherSource: nullableName,
  confidence,
  reason: z.string().max(2000).default(''),
});

const salesTypeAnswer = z.object({
  cleansed: nullableName,
  primarySalesType: nullableName,
  secondarySalesType: nullableName,
  confidence,
  reason: z.string().max(2000).default(''),
});

const SOURCE_SYSTEM = `You classify the "source" column of music royalty statements.
Answer one JSON object with the keys collectionSource (the collecting society or agency that collected the money, e.g. ASCAP, PRS, SoundExchange, MLC), earningsSource (the platform where it was earned, e.g. Spotify, YouTube), earningsCategory (one lowercase word or two: streaming, video, ugc, download, radio, performance, mechanical, neighboring rights, physical, sync, fitness, other), earningsParentCompany (the owner of the platform, only when certain), publisherSource (the publisher or administrator when the source is one), confidence (0 to 1) and reason (one sentence).
Use null for what does not apply or is unknown. Prefer the names used by the candidates when one fits. When the string names no identifiable source, answer all names null and confidence 0.`;

const SALES_TYPE_SYSTEM = `You classify the "sales type" column of music royalty statements into a fixed taxonomy.
Answer one JSON object with the keys cleansed (the raw string tidied for display), primarySalesType and secondarySalesType (exactly as written in the taxonomy, the secondary belonging to the primary, or both null when nothing fits), confidence (0 to 1) and reason (one sentence).`;

/** choices[0].message.content of a chat completion; undefined when any step is missing or not an object (JSON null included). */
function messageContent(body: unknown): unknown {
  const field = (value: unknown, key: string): unknown =>
    typeof value === 'object' && value !== null
      ? (value as Record<string, unknown>)[key]
      : undefined;
  const choices = field(body, 'choices');
  return field(field(Array.isArray(choices) ? choices[0] : undefined, 'message'), 'content');
}

type OpenAiSettings = AiSettings & { baseUrl: string };

/** Sends one system + user message pair to the chat-completions endpoint and returns the raw body. */
function requestCompletion(
  settings: OpenAiSettings,
  system: string,
  user: unknown,
  signal: AbortSignal | undefined,
): Promise<unknown> {
  return postJson(
    settings,
    '/chat/completions',
    {
      model: settings.model,
      temperature: 0,
      response_format: { type: 'json_object' },
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: JSON.stringify(user) },
      ],
    },
    signal,
  );
}

/** The completion's message content, parsed as JSON and checked against the asked shape. */
function checkedAnswer<T>(body: unknown, schema: z.ZodType<T>): T {
  const content = messageContent(body);
  if (typeof content !== 'string')
    throw new AppError('AI_PROVIDER_FAILED', 'The chat completion has no message content');
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch (error) {
    throw new AppError('AI_PROVIDER_FAILED', 'The chat completion content is not a JSON object', {
      cause: error,
    });
  }
  const checked = schema.safeParse(parsed);
  if (!checked.success) {
    throw new AppError(
      'AI_PROVIDER_FAILED',
      `The chat completion does not have the asked shape: ${checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  return checked.data;
}

/** A source answer as a resolution: all names null means the model found nothing. */
function sourceResolution(
  a: z.infer<typeof sourceAnswer>,
  model: string,
): Resolution<SourceResolution> {
  const proposal: SourceResolution = {
    collectionSource: a.collectionSource,
    earningsSource: a.earningsSource,
    earningsCategory: a.earningsCategory?.toLowerCase() ?? null,
    earningsParentCompany: a.earningsParentCompany,
    publisherSource: a.publisherSource,
  };
  const empty = Object.values(proposal).every((v) => v === null);
  return {
    proposal: empty ? null : proposal,
    confidence: empty ? 0 : a.confidence,
    method: empty ? 'none' : 'model',
    reason: a.reason || `Answered by ${model}`,
  };
}

/** A sales-type answer as a resolution; a pair outside the taxonomy is refused. */
function salesTypeResolution(
  q: SalesTypeQuestion,
  a: z.infer<typeof salesTypeAnswer>,
  model: string,
): Resolution<SalesTypeProposal> {
  if (a.primarySalesType === null) {
    return {
      proposal: null,
      confidence: 0,
      method: 'none',
      reason: a.reason || `${model} found no sales type`,
    };
  }
  const fits = q.taxonomy.some(
    (t) =>
      t.primarySalesType === a.primarySalesType &&
      (a.secondarySalesType === null || t.secondarySalesType === a.secondarySalesType),
  );
  if (!fits) {
    throw new AppError(
      'AI_PROVIDER_FAILED',
      `The model answered ${a.primarySalesType} / ${a.secondarySalesType ?? '-'}, which is not in the taxonomy`,
    );
  }
  return {
    proposal: {
      cleansed: a.cleansed ?? q.offline.proposal?.cleansed ?? q.raw.trim(),
      primarySalesType: a.primarySalesType,
      secondarySalesType: a.secondarySalesType,
    },
    confidence: a.confidence,
    method: 'model',
    reason: a.reason || `Answered by ${model}`,
  };
}

/** `signal` (a call's time budget) cuts its requests short. */
export function openAiProvider(settings: OpenAiSettings, signal?: AbortSignal): AiProvider {
  async function ask<T>(system: string, user: unknown, schema: z.ZodType<T>): Promise<T> {
    return checkedAnswer(await requestCompletion(settings, system, user, signal), schema);
  }

  return {
    name: 'openai',
    async resolveSource(q) {
      // an entry a person or an earlier resolution made is the answer; the model is not asked
      if (q.offline.method === 'lookup') return q.offline;
      const a = await ask(
        SOURCE_SYSTEM,
        { source: q.raw, normalized: q.normalized, candidates: q.candidates.slice(0, 8) },
        sourceAnswer,
      );
      return sourceResolution(a, settings.model);
    },
    async resolveSalesType(q) {
      if (q.offline.method === 'lookup') return q.offline;
      const taxonomy = q.taxonomy.map((t) => ({
        primary: t.primarySalesType,
        secondary: t.secondarySalesType,
        description: t.description,
      }));
      const a = await ask(SALES_TYPE_SYSTEM, { salesType: q.raw, taxonomy }, salesTypeAnswer);
      return salesTypeResolution(q, a, settings.model);
    },
  };
}

export function createAiProvider(
  settings: AiSettings,
  opts: { signal?: AbortSignal } = {},
): AiProvider {
  if (settings.provider === 'openai' && settings.baseUrl)
    return openAiProvider({ ...settings, baseUrl: settings.baseUrl }, opts.signal);
  return builtinProvider;
}
