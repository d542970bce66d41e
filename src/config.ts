// The only reader of process.env. Every other module receives a Config.
import { parseCrontab } from 'graphile-worker';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { projectPath } from './paths.ts';

const optionalText = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/**
 * A whole number written in decimal digits: z.coerce.number would take `0x10` as 16, `1e3` as 1000
 * and `2.0` as 2, values that are more likely mistakes than meant.
 */
const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.string().regex(/^\s*-?\d+\s*$/, 'must be a whole number').transform(Number).pipe(z.number().min(min).max(max));

const port = int(0, 65535);

/** an http(s) URL: a base for requests or links (file:, data:, javascript: and the like are mistakes) */
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });

/**
 * Text sent in an HTTP header (a key, a User-Agent): a control character (a line break pasted
 * with it) would fail every request later, naming no variable.
 */
const headerText = optionalText.refine(
  (v) => v === undefined || ![...v].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f),
  'must not hold control characters (a line break?)',
);

/**
 * Where the HTTP server listens: an IP address or a host name. A name that does not resolve is
 * told at start, naming HOST (src/runtime.ts).
 */
const host = z
  .string()
  .trim()
  .refine(
    (h) => isIP(h) !== 0 || /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i.test(h),
    'must be an IP address (127.0.0.1, 0.0.0.0, ::) or a host name',
  );

/**
 * An S3 bucket name: 3 to 63 lower-case letters, digits, dots and hyphens, as S3 and its
 * look-alikes require of a new bucket; older us-east-1 buckets may also hold capitals and
 * underscores (up to 255 characters), so those are taken too. A space or a slash never is.
 */
const bucket = optionalText.refine(
  (b) => b === undefined || /^[A-Za-z0-9][A-Za-z0-9._-]{1,253}[A-Za-z0-9]$/.test(b),
  'must be a bucket name (3 to 63 lower-case letters, digits, dots and hyphens)',
);

/** a region's name (us-east-1, auto, fr-par): it becomes part of a host name */
const region = optionalText.refine((r) => r === undefined || /^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(r), 'must be a region name (us-east-1)');

/** what pg accepts and the README documents: postgres:// and postgresql:// URLs (a socket directory as `?host=/path`) */
const postgresUrl = z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// or postgresql:// URL' });

/**
 * Why graphile-worker would refuse the schedule (99 as a minute, `mon-fri`), or undefined: checked
 * here, it would otherwise stop the job runner only once the rest had started, naming no variable.
 */
function cronProblem(cron: string): string | undefined {
  if (!/^\S+ \S+ \S+ \S+ \S+$/.test(cron)) return 'must be five cron fields';
  try {
    parseCrontab(`${cron} fx_rates_import`);
    return undefined;
  } catch (error) {
    const message = (error as Error).message;
    return /range/.test(message) ? message.replace(/ in line \d+ of crontab/, '') : 'must be five cron fields of numbers, *, ranges, lists and steps';
  }
}

/**
 * CORS_ORIGINS: browser origins allowed to call the API cross-origin, comma-separated (`*`: any).
 * Each is an http(s) origin as a browser sends it (scheme, host, port; no path): its canonical
 * form, or the problem as a string. Unset: no cross-origin calls.
 */
function corsOrigins(value: string | undefined): string[] | string {
  if (value === undefined) return [];
  const items = value.split(',').map((o) => o.trim()).filter((o) => o !== '');
  if (items.includes('*')) return items.length === 1 ? ['*'] : '`*` allows every origin and stands alone';
  const origins: string[] = [];
  for (const item of items) {
    let url: URL;
    try {
      url = new URL(item);
    } catch {
      return `${item} is not an origin (https://host[:port])`;
    }
    const bare = url.pathname === '/' && !/[?#]/.test(item) && url.username === '' && url.password === '';
    if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !bare || /^[a-z]+:\/\/[^/]*\/./i.test(item)) {
      return `${item} is not an origin (https://host[:port], no path, query or credentials)`;
    }
    origins.push(url.origin);
  }
  return origins;
}

/**
 * TRUST_PROXY: the proxies in front of the service, addresses or CIDR ranges, comma-separated: a
 * request from one of them is from the client its X-Forwarded-For names (the address per-address
 * rate limits count). Unset: none, the client is the connection's peer. The list, or the problem.
 */
function trustProxy(value: string | undefined): string | undefined | { problem: string } {
  if (value === undefined) return undefined;
  const items = value.split(',').map((i) => i.trim()).filter((i) => i !== '');
  for (const item of items) {
    const [address, bits, extra] = item.split('/');
    const family = isIP(address ?? '');
    const bitsOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
    if (family === 0 || !bitsOk || extra !== undefined) return { problem: `${item} is not an IP address or CIDR range` };
  }
  return items.join(',');
}

/**
 * OAUTH_METADATA_DOCUMENT_HOSTS: host names (DNS names, not addresses), comma-separated, whose
 * Client ID Metadata Documents may be fetched although they resolve to a loopback or private
 * address (the clients of a private deployment). The list (lower case), or the problem.
 */
function metadataDocumentHosts(value: string | undefined): string[] | string {
  if (value === undefined) return [];
  const hosts = value.split(',').map((h) => h.trim().toLowerCase()).filter((h) => h !== '');
  for (const host of hosts) {
    if (isIP(host) !== 0 || !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(host)) {
      return `${host.slice(0, 100)} is not a host name (a DNS name such as clients.internal.example; no port, no address)`;
    }
  }
  return hosts;
}

/** Variables whose empty value means something of its own (no scheduled import); any other empty value means unset. */
const EMPTY_IS_A_VALUE = new Set(['FX_RATES_URL', 'FX_RATES_CRON']);

const envSchema = z.object({
  PORT: port.default(3000),
  HOST: host.default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./data'),
  PUBLIC_URL: optionalText.pipe(httpUrl.optional()),
  DATABASE_URL: optionalText.pipe(postgresUrl.optional()),
  DATABASE_POOL_SIZE: int(1, 200).default(10),
  S3_ENDPOINT: optionalText.pipe(httpUrl.optional()),
  S3_BUCKET: bucket,
  S3_REGION: region,
  S3_ACCESS_KEY_ID: headerText,
  S3_SECRET_ACCESS_KEY: optionalText,
  S3_FORCE_PATH_STYLE: bool.optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DEMO_BOOTSTRAP: z.enum(['auto', 'true', 'false']).default('auto'),
  WORKER_CONCURRENCY: int(1, 100).default(4),
  WORKER_POLL_INTERVAL_MS: int(50, 60_000).default(1000),
  // Node's timers hold 2^31 - 1 ms at most (a longer one fires at once)
  INGEST_JOB_TIMEOUT_MS: int(1000, 2_147_483_647).default(30 * 60_000),
  /** statements of one organization processed at once, across every worker process (unset: half of WORKER_CONCURRENCY, rounded up) */
  INGEST_ORG_CONCURRENCY: int(1, 100).optional(),
  SHUTDOWN_GRACE_MS: int(0, 3_600_000).default(30_000),
  THREADS_MAX: int(1, 64).optional(),
  THREADS_MAX_QUEUE: int(1, 100_000).default(256),
  // Node's timers hold 2^31 - 1 ms at most (a longer one fires at once)
  THREADS_IDLE_TIMEOUT_MS: int(0, 2_147_483_647).default(30_000),
  THREADS_MAX_OLD_GENERATION_MB: int(64, 16_384).default(1024),
  THREADS_WARM: int(0, 8).default(1),
  BODY_LIMIT_BYTES: int(1024, 100 * 1024 * 1024).default(1024 * 1024),
  // request line and headers: a query's input travels in its URL (mapping.list with 1000 ids is ~45 KB)
  HTTP_MAX_HEADER_BYTES: int(16 * 1024, 16 * 1024 * 1024).default(256 * 1024),
  MAX_BATCH_SIZE: int(1, 1000).default(50),
  // slow clients: how long the request line and headers, the whole request, an idle connection
  // and an idle kept-alive connection may take before the connection is closed
  HTTP_HEADERS_TIMEOUT_MS: int(1000, 600_000).default(15_000),
  HTTP_REQUEST_TIMEOUT_MS: int(1000, 3_600_000).default(60_000),
  // an upload through the default install's /objects proxy: a statement file from a laptop
  HTTP_UPLOAD_TIMEOUT_MS: int(1000, 86_400_000).default(3_600_000),
  HTTP_IDLE_TIMEOUT_MS: int(1000, 3_600_000).default(120_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: int(1000, 600_000).default(10_000),
  TRUST_PROXY: optionalText.transform((v, ctx) => {
    const trust = trustProxy(v);
    if (typeof trust === 'object') ctx.addIssue({ code: 'custom', message: trust.problem });
    return typeof trust === 'object' ? undefined : trust;
  }),
  RATE_LIMIT_STORE: z.enum(['memory', 'postgres']).default('memory'),
  RATE_LIMIT_WINDOW_SECONDS: int(1, 86_400).default(60),
  RATE_LIMIT_ADDRESS_FACTOR: int(1, 1000).default(4),
  RATE_LIMIT_URLS: int(0, 1_000_000).default(120),
  RATE_LIMIT_SQL: int(0, 1_000_000).default(120),
  RATE_LIMIT_CUBE: int(0, 1_000_000).default(600),
  RATE_LIMIT_EXPORTS: int(0, 1_000_000).default(30),
  RATE_LIMIT_INVITATIONS: int(0, 1_000_000).default(30),
  RATE_LIMIT_PROVIDERS: int(0, 1_000_000).default(120),
  CORS_ORIGINS: optionalText.transform((v, ctx) => {
    const origins = corsOrigins(v);
    if (typeof origins === 'string') ctx.addIssue({ code: 'custom', message: origins });
    return Array.isArray(origins) ? origins : [];
  }),
  INVITATION_TTL_HOURS: int(1, 24 * 365).default(24 * 7),
  OAUTH_LOGIN_FAILURES_PER_ACCOUNT: int(1, 1000).default(5),
  OAUTH_LOGIN_FAILURES_PER_ADDRESS: int(1, 1_000_000).default(30),
  OAUTH_LOGIN_WINDOW_SECONDS: int(1, 86_400).default(900),
  OAUTH_REGISTRATIONS_PER_ADDRESS: int(1, 1_000_000).default(20),
  OAUTH_TOKEN_REQUESTS_PER_ADDRESS: int(1, 1_000_000).default(120),
  OAUTH_UNUSED_CLIENT_TTL_HOURS: int(1, 24 * 365).default(24),
  OAUTH_METADATA_DOCUMENT_HOSTS: optionalText.transform((v, ctx) => {
    const hosts = metadataDocumentHosts(v);
    if (typeof hosts === 'string') ctx.addIssue({ code: 'custom', message: hosts });
    return Array.isArray(hosts) ? hosts : [];
  }),
  AI_PROVIDER: z.enum(['builtin', 'openai']).default('builtin'),
  AI_BASE_URL: optionalText.pipe(httpUrl.optional()),
  AI_API_KEY: headerText,
  AI_MODEL: optionalText,
  AI_EMBEDDING_MODEL: optionalText,
  AI_TIMEOUT_MS: int(100, 600_000).default(30_000),
  MARKET_PROVIDER: z.enum(['builtin', 'yahoo']).default('builtin'),
  MARKET_BASE_URL: optionalText.pipe(httpUrl.optional()),
  TREASURY_BASE_URL: optionalText.pipe(httpUrl.optional()),
  MARKET_TIMEOUT_MS: int(100, 600_000).default(15_000),
  ENRICHMENT_PROVIDER: z.enum(['offline', 'musicbrainz']).default('offline'),
  MUSICBRAINZ_URL: optionalText.pipe(httpUrl.optional()),
  MUSICBRAINZ_USER_AGENT: headerText,
  MUSICBRAINZ_CONTACT: headerText,
  MUSICBRAINZ_MIN_INTERVAL_MS: int(0, 60_000).default(1000),
  ENRICHMENT_TIMEOUT_MS: int(100, 600_000).default(15_000),
  ANALYTICS_DIR: optionalText,
  ANALYTICS_THREADS: int(1, 64).default(2),
  ANALYTICS_MEMORY_MB: int(64, 1_048_576).default(1024),
  ANALYTICS_RESULT_CACHE_MB: int(0, 65_536).default(128),
  CUBE_SYNC_TIMEOUT_MS: int(1, 600_000).default(25_000),
  CUBE_ASYNC_WAIT_MS: int(0, 60_000).default(1_000),
  CUBE_QUERY_TIMEOUT_MS: int(100, 3_600_000).default(300_000),
  CUBE_SQL_TIMEOUT_MS: int(100, 600_000).default(20_000),
  CUBE_SQL_MEMORY_MB: int(32, 65_536).default(512),
  CUBE_SQL_MAX_ROWS: int(1, 1_000_000).default(50_000),
  CUBE_SQL_MAX_RESULT_MB: int(1, 4_096).default(64),
  CUBE_SQL_THREADS: int(1, 16).default(1),
  /** sqlQuery sandboxes running at once; unset: one a core, within half the memory (sandboxSlots) */
  CUBE_SQL_CONCURRENCY: int(1, 256).optional(),
  CUBE_SESSION_TTL_SECONDS: int(60, 86_400).default(3_600),
  MCP_TIMEOUT_MS: int(10, 600_000).default(55_000),
  MCP_MAX_ROWS: int(1, 100_000).default(200),
  EXPORT_PART_ROWS: int(1, 10_000_000).default(1_000_000),
  EXPORT_RETENTION_HOURS: int(1, 87_600).default(168),
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  FX_RATES_URL: z
    .string()
    .trim()
    .default('https://www.ecb.europa.eu/stats/eurofxref/eurofxref.zip')
    .pipe(z.union([z.literal(''), z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL, or empty for no scheduled import' })])),
  FX_RATES_CRON: z
    .string()
    .trim()
    .default('0 17 * * 1-5')
    .superRefine((cron, ctx) => {
      const problem = cron === '' ? undefined : cronProblem(cron);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
});

export type Env = Record<string, string | undefined>;

export interface S3Settings {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  publicUrl: string | undefined;
  /** undefined: start the embedded PostgreSQL under dataDir/pg */
  databaseUrl: string | undefined;
  databasePoolSize: number;
  /** undefined: start the embedded S3 server under dataDir/s3 */
  s3: S3Settings | undefined;
  /** bucket used by the embedded S3 server */
  embeddedBucket: string;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  demoBootstrap: 'auto' | 'true' | 'false';
  worker: { concurrency: number; pollIntervalMs: number };
  /**
   * statement ingestion: `jobTimeoutMs`, the wall-clock budget of one run, enforced by a timer
   * that stops it wherever it is; `orgConcurrency`, how many statements of one organization are
   * processed at once across every worker process (src/ingest/queue.ts)
   */
  ingest: { jobTimeoutMs: number; orgConcurrency: number };
  /** how long a shutdown waits for running requests and jobs before releasing the jobs for a retry */
  shutdownGraceMs: number;
  threads: { maxThreads: number; maxQueue: number; idleTimeoutMs: number; maxOldGenerationMb: number; warm: number };
  bodyLimitBytes: number;
  /** largest request line plus headers (Node's maxHeaderSize): a query's input is in its URL */
  httpMaxHeaderBytes: number;
  maxBatchSize: number;
  /** slow clients: the limits of one connection's request and idle times */
  http: HttpTimeouts;
  /** fastify's trustProxy: the proxies (addresses, CIDR ranges) whose X-Forwarded-For is believed; undefined: none */
  trustProxy: string | undefined;
  /** calls per window of each group of costly procedures, per principal and per address */
  rateLimits: RateLimitSettings;
  /** browser origins allowed cross-origin (CORS): [] none, ['*'] any */
  corsOrigins: string[];
  /** how long an invitation link stays valid */
  invitationTtlHours: number;
  /** sign-in (src/oauth): failed logins allowed per account and per address within the window; registrations per address an hour */
  oauth: OAuthSettings;
  /** resolution of raw sales types and sources: the built-in resolver or an OpenAI-compatible endpoint */
  ai: AiSettings;
  /** market quotes, history and Treasury yields: imported data, or live over HTTP */
  market: MarketSettings;
  /** the catalog's enrichment provider: the offline dataset or MusicBrainz */
  enrichment: EnrichmentSettings;
  /** the analytics view: local DuckDB databases, result cache, query windows, the SQL sandbox, embed sessions */
  analytics: AnalyticsSettings;
  /** exports: rows per output file (XLSX parts hold at most 250,000) */
  exports: { partRows: number; retentionHours: number };
  /** the tool server (src/mcp): a tool call's time limit, rows a result keeps */
  mcp: { timeoutMs: number; maxRows: number };
  production: boolean;
  /** the daily exchange-rate import: URL and schedule (either empty: no scheduled import) */
  fxImport: { url: string; cron: string };
}

export interface HttpTimeouts {
  /** request line and headers received within (Node's headersTimeout) */
  headersTimeoutMs: number;
  /** the whole request, body included, received within (Node's requestTimeout): else 408 */
  requestTimeoutMs: number;
  /** an upload through /objects (the default install's store) must arrive within this */
  uploadTimeoutMs: number;
  /** a connection with no bytes either way for this long is closed (fastify's connectionTimeout) */
  idleTimeoutMs: number;
  /** a kept-alive connection waiting for its next request (keepAliveTimeout) */
  keepAliveTimeoutMs: number;
}

export const rateLimitGroups = ['urls', 'sql', 'cube', 'exports', 'invitations', 'providers'] as const;
export type RateLimitGroup = (typeof rateLimitGroups)[number];

export interface RateLimitSettings {
  /** memory: counted in each process; postgres: in the database, shared by every process using it */
  store: 'memory' | 'postgres';
  windowSeconds: number;
  /** calls of one principal per window in each group (0: no limit); one address may make addressFactor times as many */
  perPrincipal: Record<RateLimitGroup, number>;
  addressFactor: number;
}

export interface OAuthSettings {
  loginFailuresPerAccount: number;
  loginFailuresPerAddress: number;
  loginWindowSeconds: number;
  /** dynamic client registrations and Client ID Metadata Document fetches per address an hour */
  registrationsPerAddress: number;
  /** requests to the token endpoint (codes, refreshes, device polls) per address a minute */
  tokenRequestsPerAddress: number;
  /** a registered client that never obtained a token is removed after this long */
  unusedClientTtlHours: number;
  /** hosts whose Client ID Metadata Documents may be fetched from private or loopback addresses */
  metadataDocumentHosts: string[];
}

export interface AnalyticsSettings {
  /** per-organization DuckDB databases (derived data) and sandbox scratch files */
  dir: string;
  threads: number;
  memoryMb: number;
  resultCacheMb: number;
  /** the synchronous window of cube.query and cube.sqlQuery */
  syncTimeoutMs: number;
  /** how long queryAsync / queryPoll wait for an answer before saying processing */
  asyncWaitMs: number;
  /** a cube query still running after this is interrupted */
  queryTimeoutMs: number;
  /** concurrency: sandboxes running at once (undefined: one a core, within half the memory) */
  sql: { threads: number; memoryMb: number; timeoutMs: number; maxRows: number; maxResultMb: number; concurrency: number | undefined };
  sessionTtlSeconds: number;
}

export interface AiSettings {
  provider: 'builtin' | 'openai';
  /** OpenAI-compatible API base, e.g. https://api.openai.com/v1 */
  baseUrl: string | undefined;
  apiKey: string | undefined;
  model: string;
  /** set: embeddings from {baseUrl}/embeddings; unset: the built-in hashed n-gram embedding */
  embeddingModel: string | undefined;
  timeoutMs: number;
}

export interface EnrichmentSettings {
  provider: 'offline' | 'musicbrainz';
  /** per request to the provider */
  timeoutMs: number;
  musicbrainz: {
    /** web service root, e.g. https://musicbrainz.org (requests go to {baseUrl}/ws/2/…) */
    baseUrl: string;
    /** `Application/version ( contact )`, as MusicBrainz requires */
    userAgent: string;
    /** at least this long between two requests of one process */
    minIntervalMs: number;
  };
}

/** name and version of this program, for the User-Agent MusicBrainz asks for */
const packageInfo = JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as { name: string; version: string };

export interface MarketSettings {
  provider: 'builtin' | 'yahoo';
  /** Yahoo Finance chart API base */
  baseUrl: string;
  /** home.treasury.gov */
  treasuryBaseUrl: string;
  timeoutMs: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The environment with empty (or blank) values removed: `PORT=` is PORT unset, not port 0. */
function withoutEmpty(env: Env): Env {
  return Object.fromEntries(Object.entries(env).filter(([key, value]) => EMPTY_IS_A_VALUE.has(key) || (value !== undefined && value.trim() !== '')));
}

export function loadConfig(env: Env = process.env): Config {
  const parsed = envSchema.safeParse(withoutEmpty(env));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.') || '(environment)'}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  if (e.ENRICHMENT_PROVIDER === 'musicbrainz' && !e.MUSICBRAINZ_USER_AGENT && !e.MUSICBRAINZ_CONTACT) {
    throw new ConfigError('Invalid configuration: ENRICHMENT_PROVIDER=musicbrainz needs MUSICBRAINZ_CONTACT (an e-mail address or URL) or MUSICBRAINZ_USER_AGENT');
  }
  if (e.HTTP_HEADERS_TIMEOUT_MS > e.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError('Invalid configuration: HTTP_HEADERS_TIMEOUT_MS must not be above HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)');
  }
  // an idle connection is one whose answer is being computed too: the synchronous analytics window must fit
  if (e.HTTP_IDLE_TIMEOUT_MS <= e.CUBE_SYNC_TIMEOUT_MS) {
    throw new ConfigError('Invalid configuration: HTTP_IDLE_TIMEOUT_MS must be above CUBE_SYNC_TIMEOUT_MS (a query answers within that window, the connection quiet meanwhile)');
  }
  if (e.AI_PROVIDER === 'openai' && !e.AI_BASE_URL) {
    throw new ConfigError('Invalid configuration: AI_PROVIDER=openai needs AI_BASE_URL');
  }
  const s3Given = [e.S3_ENDPOINT, e.S3_BUCKET, e.S3_ACCESS_KEY_ID, e.S3_SECRET_ACCESS_KEY].some((v) => v !== undefined);
  let s3: S3Settings | undefined;
  if (s3Given) {
    const missing = (
      [
        ['S3_ENDPOINT', e.S3_ENDPOINT],
        ['S3_BUCKET', e.S3_BUCKET],
        ['S3_ACCESS_KEY_ID', e.S3_ACCESS_KEY_ID],
        ['S3_SECRET_ACCESS_KEY', e.S3_SECRET_ACCESS_KEY],
      ] as const
    )
      .filter(([, v]) => v === undefined)
      .map(([k]) => k);
    if (missing.length > 0) {
      throw new ConfigError(`Invalid configuration: S3 is partly configured; also set ${missing.join(', ')}`);
    }
    s3 = {
      endpoint: e.S3_ENDPOINT!,
      bucket: e.S3_BUCKET!,
      region: e.S3_REGION ?? 'us-east-1',
      accessKeyId: e.S3_ACCESS_KEY_ID!,
      secretAccessKey: e.S3_SECRET_ACCESS_KEY!,
      forcePathStyle: e.S3_FORCE_PATH_STYLE ?? true,
    };
  }
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: path.resolve(e.DATA_DIR),
    publicUrl: e.PUBLIC_URL,
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    s3,
    embeddedBucket: e.S3_BUCKET ?? 'royalty',
    logLevel: e.LOG_LEVEL,
    demoBootstrap: e.DEMO_BOOTSTRAP,
    worker: { concurrency: e.WORKER_CONCURRENCY, pollIntervalMs: e.WORKER_POLL_INTERVAL_MS },
    ingest: { jobTimeoutMs: e.INGEST_JOB_TIMEOUT_MS, orgConcurrency: e.INGEST_ORG_CONCURRENCY ?? Math.ceil(e.WORKER_CONCURRENCY / 2) },
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    threads: {
      maxThreads: e.THREADS_MAX ?? 2,
      maxQueue: e.THREADS_MAX_QUEUE,
      idleTimeoutMs: e.THREADS_IDLE_TIMEOUT_MS,
      maxOldGenerationMb: e.THREADS_MAX_OLD_GENERATION_MB,
      warm: e.THREADS_WARM,
    },
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    httpMaxHeaderBytes: e.HTTP_MAX_HEADER_BYTES,
    maxBatchSize: e.MAX_BATCH_SIZE,
    http: {
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      uploadTimeoutMs: e.HTTP_UPLOAD_TIMEOUT_MS,
      idleTimeoutMs: e.HTTP_IDLE_TIMEOUT_MS,
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    },
    trustProxy: e.TRUST_PROXY,
    rateLimits: {
      store: e.RATE_LIMIT_STORE,
      windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS,
      addressFactor: e.RATE_LIMIT_ADDRESS_FACTOR,
      perPrincipal: {
        urls: e.RATE_LIMIT_URLS,
        sql: e.RATE_LIMIT_SQL,
        cube: e.RATE_LIMIT_CUBE,
        exports: e.RATE_LIMIT_EXPORTS,
        invitations: e.RATE_LIMIT_INVITATIONS,
        providers: e.RATE_LIMIT_PROVIDERS,
      },
    },
    corsOrigins: e.CORS_ORIGINS,
    invitationTtlHours: e.INVITATION_TTL_HOURS,
    oauth: {
      loginFailuresPerAccount: e.OAUTH_LOGIN_FAILURES_PER_ACCOUNT,
      loginFailuresPerAddress: e.OAUTH_LOGIN_FAILURES_PER_ADDRESS,
      loginWindowSeconds: e.OAUTH_LOGIN_WINDOW_SECONDS,
      registrationsPerAddress: e.OAUTH_REGISTRATIONS_PER_ADDRESS,
      tokenRequestsPerAddress: e.OAUTH_TOKEN_REQUESTS_PER_ADDRESS,
      unusedClientTtlHours: e.OAUTH_UNUSED_CLIENT_TTL_HOURS,
      metadataDocumentHosts: e.OAUTH_METADATA_DOCUMENT_HOSTS,
    },
    ai: {
      provider: e.AI_PROVIDER,
      baseUrl: e.AI_BASE_URL?.replace(/\/+$/, ''),
      apiKey: e.AI_API_KEY,
      model: e.AI_MODEL ?? 'gpt-4o-mini',
      embeddingModel: e.AI_EMBEDDING_MODEL,
      timeoutMs: e.AI_TIMEOUT_MS,
    },
    market: {
      provider: e.MARKET_PROVIDER,
      baseUrl: (e.MARKET_BASE_URL ?? 'https://query1.finance.yahoo.com').replace(/\/+$/, ''),
      treasuryBaseUrl: (e.TREASURY_BASE_URL ?? 'https://home.treasury.gov').replace(/\/+$/, ''),
      timeoutMs: e.MARKET_TIMEOUT_MS,
    },
    analytics: {
      dir: path.resolve(e.ANALYTICS_DIR ?? path.join(e.DATA_DIR, 'analytics')),
      threads: e.ANALYTICS_THREADS,
      memoryMb: e.ANALYTICS_MEMORY_MB,
      resultCacheMb: e.ANALYTICS_RESULT_CACHE_MB,
      syncTimeoutMs: e.CUBE_SYNC_TIMEOUT_MS,
      asyncWaitMs: e.CUBE_ASYNC_WAIT_MS,
      queryTimeoutMs: e.CUBE_QUERY_TIMEOUT_MS,
      sql: { threads: e.CUBE_SQL_THREADS, memoryMb: e.CUBE_SQL_MEMORY_MB, timeoutMs: e.CUBE_SQL_TIMEOUT_MS, maxRows: e.CUBE_SQL_MAX_ROWS, maxResultMb: e.CUBE_SQL_MAX_RESULT_MB, concurrency: e.CUBE_SQL_CONCURRENCY },
      sessionTtlSeconds: e.CUBE_SESSION_TTL_SECONDS,
    },
    production: e.NODE_ENV === 'production',
    fxImport: { url: e.FX_RATES_URL, cron: e.FX_RATES_CRON },
    exports: { partRows: e.EXPORT_PART_ROWS, retentionHours: e.EXPORT_RETENTION_HOURS },
    mcp: { timeoutMs: e.MCP_TIMEOUT_MS, maxRows: e.MCP_MAX_ROWS },
    enrichment: {
      provider: e.ENRICHMENT_PROVIDER,
      timeoutMs: e.ENRICHMENT_TIMEOUT_MS,
      musicbrainz: {
        baseUrl: (e.MUSICBRAINZ_URL ?? 'https://musicbrainz.org').replace(/\/+$/, ''),
        userAgent: e.MUSICBRAINZ_USER_AGENT ?? `${packageInfo.name}/${packageInfo.version} ( ${e.MUSICBRAINZ_CONTACT ?? 'contact not configured'} )`,
        minIntervalMs: e.MUSICBRAINZ_MIN_INTERVAL_MS,
      },
    },
  };
}
