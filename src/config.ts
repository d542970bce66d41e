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
  z
    .string()
    .regex(/^\s*-?\d+\s*$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(min).max(max));

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
    (h) =>
      isIP(h) !== 0 ||
      /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i.test(
        h,
      ),
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
const region = optionalText.refine(
  (r) => r === undefined || /^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(r),
  'must be a region name (us-east-1)',
);

/** what pg accepts and docs/reference/configuration.md documents: postgres:// and postgresql:// URLs (a socket directory as `?host=/path`) */
const postgresUrl = z.url({
  protocol: /^postgres(ql)?$/,
  error: 'must be a postgres:// or postgresql:// URL',
});

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
    return /range/.test(message)
      ? message.replace(/ in line \d+ of crontab/, '')
      : 'must be five cron fields of numbers, *, ranges, lists and steps';
  }
}

/**
 * CORS_ORIGINS: browser origins allowed to call the API cross-origin, comma-separated (`*`: any).
 * Each is an http(s) origin as a browser sends it (scheme, host, port; no path): its canonical
 * form, or the problem as a string. Unset: no cross-origin calls.
 */
function corsOrigins(value: string | undefined): string[] | string {
  if (value === undefined) return [];
  const items = value
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  if (items.includes('*'))
    return items.length === 1 ? ['*'] : '`*` allows every origin and stands alone';
  const origins: string[] = [];
  for (const item of items) {
    let url: URL;
    try {
      url = new URL(item);
    } catch {
      return `${item} is not an origin (https://host[:port])`;
    }
    const bare =
      url.pathname === '/' && !/[?#]/.test(item) && url.username === '' && url.password === '';
    if (
      (url.protocol !== 'https:' && url.protocol !== 'http:') ||
      !bare ||
      /^[a-z]+:\/\/[^/]*\/./i.test(item)
    ) {
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
  const items = value
    .split(',')
    .map((i) => i.trim())
    .filter((i) => i !== '');
  for (const item of items) {
    const [address, bits, extra] = item.split('/');
    const family = isIP(address ?? '');
    const bitsOk =
      bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
    if (family === 0 || !bitsOk || extra !== undefined)
      return { problem: `${item} is not an IP address or CIDR range` };
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
  const hosts = value
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h !== '');
  for (const host of hosts) {
    if (
      isIP(host) !== 0 ||
      !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(
        host,
      )
    ) {
      return `${host.slice(0, 100)} is not a host name (a DNS name such as clients.internal.example; no port, no address)`;
    }
  }
  return hosts;
}

/** Variables whose empty value means something of its own (no scheduled import); any other empty value means unset. */
const EMPTY_IS_A_VALUE = new Set(['FX_RATES_URL', 'FX_RATES_CRON']);

const envSchema = z.object({
  PORT: port.default(3000).describe('HTTP port'),
  HOST: host.default('127.0.0.1').describe('HTTP interface'),
  DATA_DIR: z
    .string()
    .min(1)
    .default('./data')
    .describe(
      "where the embedded servers keep their data (`pg/`, `s3/`, `object-signing.key`: the secret of the embedded object store's presigned URLs, `s3-incoming/`: uploads to it until complete, `pg.log`, and `pg.users.json`, `pg.lock`: who uses the embedded PostgreSQL, present while it runs; and `analytics/`, the default `ANALYTICS_DIR`; the first start makes the cluster in `pg.init-…` and renames it to `pg/` once complete, so a start killed meanwhile leaves nothing the next one trips on). Run as root, PostgreSQL runs as the system user `postgres`, which must be able to reach it (not under a `0700` home such as `/root`)",
    ),
  PUBLIC_URL: optionalText
    .pipe(httpUrl.optional())
    .describe(
      'the base URL printed and used in links, and the OAuth issuer: discovery, the endpoints under `/api/oauth`, the token audiences `{PUBLIC_URL}/trpc` and `{PUBLIC_URL}/mcp` are all built from it, whatever `Host` a request carries. Set it to the address people and clients reach (`https://royalty.example.com`) whenever the service is behind a proxy or listens on a wildcard interface: tokens issued under one `PUBLIC_URL` are bound to its audiences; with the embedded object store also the address of its presigned upload and download URLs (`{PUBLIC_URL}/objects/…`), so set it to what clients on other machines reach (a path such as `https://host/engine` is kept in the URLs and signed; a reverse proxy in front may strip it and rewrite `Host`) (unset: the listening address)',
    ),
  DATABASE_URL: optionalText
    .pipe(postgresUrl.optional())
    .describe(
      'PostgreSQL connection string, a `postgres://` or `postgresql://` URL (a socket directory as `?host=/path`, e.g. `postgres://user@localhost/db?host=/var/run/postgresql`; a user with an empty host, `postgres://user@/db`, is not a URL and is refused); when set nothing is embedded (unset: embedded PostgreSQL)',
    ),
  DATABASE_POOL_SIZE: int(1, 200).default(10).describe('connections per process'),
  S3_ENDPOINT: optionalText
    .pipe(httpUrl.optional())
    .describe(
      "S3 endpoint; with `S3_BUCKET`, `S3_ACCESS_KEY_ID`, `S3_SECRET_ACCESS_KEY` all set, nothing is embedded; setting some of these four but not all stops the start (`S3 is partly configured; also set …`), so the embedded s3rver's bucket is always `royalty`. The embedded s3rver has no TCP port: it listens on a unix socket in a fresh `0700` directory under the system's temporary directory, and clients reach it only through the service at `{PUBLIC_URL}/objects/`, which checks every request's signature first (Decisions, \"The default object store\"). A configured S3 (AWS, MinIO, R2, Ceph) is reached directly: its presigned URLs point at `S3_ENDPOINT`, and it checks them itself (unset: embedded s3rver)",
    ),
  S3_BUCKET: bucket.describe('bucket (created when missing) (unset: `royalty`)'),
  S3_REGION: region.describe('region (unset: `us-east-1`)'),
  S3_ACCESS_KEY_ID: headerText.describe(
    'access key id of the configured object store (`S3_ENDPOINT`)',
  ),
  S3_SECRET_ACCESS_KEY: optionalText.describe(
    'secret access key of the configured object store (`S3_ENDPOINT`)',
  ),
  S3_FORCE_PATH_STYLE: bool
    .optional()
    .describe('path-style addressing (most S3-compatible servers need it) (unset: `true`)'),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe('`fatal` … `trace`, or `silent`'),
  DEMO_BOOTSTRAP: z
    .enum(['auto', 'true', 'false'])
    .default('auto')
    .describe(
      'create the demo organization on the first start of an empty database: `auto` (only with the embedded database), `true`, `false`',
    ),
  WORKER_CONCURRENCY: int(1, 100).default(4).describe('jobs run at once per process'),
  WORKER_POLL_INTERVAL_MS: int(50, 60_000)
    .default(1000)
    .describe('job polling interval (LISTEN/NOTIFY wakes workers sooner)'),
  // Node's timers hold 2^31 - 1 ms at most (a longer one fires at once)
  INGEST_JOB_TIMEOUT_MS: int(1000, 2_147_483_647)
    .default(30 * 60_000)
    .describe(
      "the time budget of one statement's run (30 min, at least 1000): a timer stops it wherever it is (download, file reader, normalizer, upload) and fails the statement with `INGEST_TIME_BUDGET_EXCEEDED` (not retried), freeing its job slot",
    ),
  /** statements of one organization processed at once, across every worker process (unset: all of WORKER_CONCURRENCY but one, at least 1) */
  INGEST_ORG_CONCURRENCY: int(1, 100)
    .optional()
    .describe(
      "statements of one organization processed at once, across every worker process against the database (a cap held by PostgreSQL's job-queue locks); with several processes, set it from their slots together, and to the same value in every process (the API's too: it decides which of the organization's queues a statement joins) (unset: all of `WORKER_CONCURRENCY` but one, at least 1: another organization's statement or another job always finds a slot)",
    ),
  SHUTDOWN_GRACE_MS: int(0, 3_600_000)
    .default(30_000)
    .describe(
      'how long a shutdown (SIGTERM, SIGINT, SIGHUP) waits for running requests and jobs (0 … 3600000); then the jobs still running are released for a retry, their attempt not counted, and the process exits 0',
    ),
  THREADS_MAX: int(1, 64)
    .optional()
    .describe('piscina worker threads, all tasks together (one pool) (unset: `2`)'),
  THREADS_MAX_QUEUE: int(1, 100_000)
    .default(256)
    .describe('queued thread tasks before WORKER_QUEUE_FULL'),
  // Node's timers hold 2^31 - 1 ms at most (a longer one fires at once)
  THREADS_IDLE_TIMEOUT_MS: int(0, 2_147_483_647).default(30_000).describe('idle thread lifetime'),
  THREADS_MAX_OLD_GENERATION_MB: int(64, 16_384)
    .default(1024)
    .describe('heap limit of each worker thread'),
  THREADS_WARM: int(0, 8)
    .optional()
    .describe(
      'threads, with the file reader and the normalizer loaded, started with a job runner (`serve`, `worker`) and kept when idle, so a statement does not wait for a thread to load (unset: `THREADS_MAX`, every thread; at most `THREADS_MAX`) (tests: `0` unless a test says otherwise)',
    ),
  BODY_LIMIT_BYTES: int(1024, 100 * 1024 * 1024)
    .default(1024 * 1024)
    .describe('largest request body'),
  // request line and headers: a query's input travels in its URL (mapping.list with 1000 ids is ~45 KB)
  HTTP_MAX_HEADER_BYTES: int(16 * 1024, 16 * 1024 * 1024)
    .default(256 * 1024)
    .describe(
      "largest request line plus headers (Node's `maxHeaderSize`; 16 KiB … 16 MiB): a query's input travels in its URL, and `mapping.list` with 1000 ids is about 45 KB; beyond it BAD_REQUEST `REQUEST_TOO_LARGE`",
    ),
  MAX_BATCH_SIZE: int(1, 1000).default(50).describe('most procedures in one batch call'),
  // slow clients: how long the request line and headers, the whole request, an idle connection
  // and an idle kept-alive connection may take before the connection is closed
  HTTP_HEADERS_TIMEOUT_MS: int(1000, 600_000)
    .default(15_000)
    .describe(
      "a request's line and headers must arrive within this (at most `HTTP_REQUEST_TIMEOUT_MS`), else 408 `REQUEST_TIMEOUT` and the connection is closed",
    ),
  HTTP_REQUEST_TIMEOUT_MS: int(1000, 3_600_000)
    .default(60_000)
    .describe(
      'the whole request, body included, must arrive within this, else 408 `REQUEST_TIMEOUT` and the connection is closed (a slow client holds no connection longer); uploads through `/objects` have `HTTP_UPLOAD_TIMEOUT_MS` instead',
    ),
  // an upload through the default install's /objects proxy: a statement file from a laptop
  HTTP_UPLOAD_TIMEOUT_MS: int(1000, 86_400_000)
    .default(3_600_000)
    .describe(
      "an upload of a statement file through the default install's `/objects` must arrive within this (a large file from a slow link), else 408 `REQUEST_TIMEOUT`",
    ),
  HTTP_IDLE_TIMEOUT_MS: int(1000, 3_600_000)
    .default(120_000)
    .describe(
      'a connection with no bytes either way for this long is closed (a client that stopped reading); must be above `CUBE_SYNC_TIMEOUT_MS`',
    ),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: int(1000, 600_000)
    .default(10_000)
    .describe(
      "how long a kept-alive connection waits for its next request; behind a load balancer that reuses connections, set it above the balancer's idle timeout",
    ),
  TRUST_PROXY: optionalText
    .transform((v, ctx) => {
      const trust = trustProxy(v);
      if (typeof trust === 'object') ctx.addIssue({ code: 'custom', message: trust.problem });
      return typeof trust === 'object' ? undefined : trust;
    })
    .describe(
      "the proxies in front of the service, IP addresses or CIDR ranges, comma-separated (`10.0.0.0/8,127.0.0.1`): a request from one of them is from the client its `X-Forwarded-For` names, the address per-address rate limits count; unset: the connection's peer",
    ),
  RATE_LIMIT_STORE: z
    .enum(['memory', 'postgres'])
    .default('memory')
    .describe(
      'where rate limits count: `memory` (each process on its own: N API processes allow N times the budget) or `postgres` (the table `rate_limits`, shared by every process on the database)',
    ),
  RATE_LIMIT_WINDOW_SECONDS: int(1, 86_400)
    .default(60)
    .describe('the window every budget below is counted in (1 … 86400)'),
  RATE_LIMIT_ADDRESS_FACTOR: int(1, 1000)
    .default(4)
    .describe("one client address may make this many times a principal's budget"),
  RATE_LIMIT_URLS: int(0, 1_000_000)
    .default(120)
    .describe(
      'calls per window of one principal that mint presigned URLs (`upload.uploadFile`, `upload.heartbeat`, `fileStorage.downloadStatementFile`, `export.downloadFile`); 0: no limit',
    ),
  RATE_LIMIT_SQL: int(0, 1_000_000)
    .default(120)
    .describe(
      '`cube.sqlQuery`, `sqlQueryAsync`, `sqlQueryPoll` calls per window of one principal (a statement polled every 2–3 s takes 20–30 a minute); 0: no limit',
    ),
  RATE_LIMIT_CUBE: int(0, 1_000_000)
    .default(600)
    .describe(
      '`cube.query`, `queryAsync`, `queryPoll` calls per window of one principal; 0: no limit',
    ),
  RATE_LIMIT_EXPORTS: int(0, 1_000_000)
    .default(30)
    .describe('`export.trigger` calls per window of one principal; 0: no limit'),
  RATE_LIMIT_INVITATIONS: int(0, 1_000_000)
    .default(30)
    .describe(
      '`organization.addUser`, `resendInvitation`, `getInvitationLink` calls per window of one principal, and (times the address factor) `POST /invitations/accept` requests per address; 0: no limit',
    ),
  RATE_LIMIT_PROVIDERS: int(0, 1_000_000)
    .default(120)
    .describe(
      '`market.getQuotes`, `getHistory`, `getTreasuryYields` and `musicEnrichment.query` calls per window of one principal (with a live provider, each is a request of ours to Yahoo, the Treasury or MusicBrainz); 0: no limit',
    ),
  CORS_ORIGINS: optionalText
    .transform((v, ctx) => {
      const origins = corsOrigins(v);
      if (typeof origins === 'string') ctx.addIssue({ code: 'custom', message: origins });
      return Array.isArray(origins) ? origins : [];
    })
    .describe(
      'browser origins allowed to call the API cross-origin, comma-separated (`https://app.example.com,http://localhost:5173`), or `*` for any; unset: none (no CORS headers; a preflight is `METHOD_NOT_SUPPORTED`). Checked at start: origins only, no path, query or credentials; `null` is never allowed',
    ),
  INVITATION_TTL_HOURS: int(1, 24 * 365)
    .default(24 * 7)
    .describe('how long an invitation stays pending before it is reported `expired` (1 … 8760)'),
  OAUTH_LOGIN_FAILURES_PER_ACCOUNT: int(1, 1000)
    .default(5)
    .describe(
      'failed sign-ins allowed per e-mail within `OAUTH_LOGIN_WINDOW_SECONDS` (known or not: the answer never tells); then the login form answers 429 until the window ends, even with the right password',
    ),
  OAUTH_LOGIN_FAILURES_PER_ADDRESS: int(1, 1_000_000)
    .default(30)
    .describe(
      "failed sign-ins allowed per client address within the window, whatever the e-mails. The address is the one the API's rate limits count: the connection's peer, or behind `TRUST_PROXY`'s proxies the forwarded client address. Like every sign-in limit it is counted where `RATE_LIMIT_STORE` says (`postgres`: shared by every process)",
    ),
  OAUTH_LOGIN_WINDOW_SECONDS: int(1, 86_400)
    .default(900)
    .describe(
      'the window of both login limits (also of user-code tries on the device page: 30 per address)',
    ),
  OAUTH_REGISTRATIONS_PER_ADDRESS: int(1, 1_000_000)
    .default(20)
    .describe(
      'dynamic client registrations plus Client ID Metadata Document fetches per client address an hour; more are 429',
    ),
  OAUTH_TOKEN_REQUESTS_PER_ADDRESS: int(1, 1_000_000)
    .default(120)
    .describe(
      'requests to the token endpoint (code redemptions, refreshes, device-flow polls) per client address a minute; more are 429 `too_many_requests` with `Retry-After`',
    ),
  OAUTH_UNUSED_CLIENT_TTL_HOURS: int(1, 24 * 365)
    .default(24)
    .describe('a registered client that has obtained no token by then is removed'),
  OAUTH_METADATA_DOCUMENT_HOSTS: optionalText
    .transform((v, ctx) => {
      const hosts = metadataDocumentHosts(v);
      if (typeof hosts === 'string') ctx.addIssue({ code: 'custom', message: hosts });
      return Array.isArray(hosts) ? hosts : [];
    })
    .describe(
      "host names (DNS names, comma-separated; no addresses, no ports) whose Client ID Metadata Documents may be fetched although they resolve to a loopback or private address: the clients of a private deployment. Every other `client_id` URL is fetched only from a public address (oidc-provider's guard against SSRF). An internal CA for those hosts is trusted the Node way, `NODE_EXTRA_CA_CERTS`",
    ),
  AI_PROVIDER: z
    .enum(['builtin', 'openai'])
    .default('builtin')
    .describe(
      'resolution of raw sales types and sources (`resolveWithAI`): `builtin` (offline resolver) or `openai` (an OpenAI-compatible chat-completions endpoint)',
    ),
  AI_BASE_URL: optionalText
    .pipe(httpUrl.optional())
    .describe(
      'API base of the OpenAI-compatible endpoint, e.g. `https://api.openai.com/v1` (required with `openai`)',
    ),
  AI_API_KEY: headerText.describe('sent as `Authorization: Bearer …`'),
  AI_MODEL: optionalText.describe('chat model (unset: `gpt-4o-mini`)'),
  AI_EMBEDDING_MODEL: optionalText.describe(
    'with `openai`, vector entries are embedded by `{AI_BASE_URL}/embeddings` with this model (unset: built-in hashed n-gram embedding)',
  ),
  AI_TIMEOUT_MS: int(100, 600_000)
    .default(30_000)
    .describe(
      'per request to the AI provider; a resolveWithAI / batchResolveWithAI call as a whole has twice this',
    ),
  MARKET_PROVIDER: z
    .enum(['builtin', 'yahoo'])
    .default('builtin')
    .describe(
      "`market.*`: `builtin` (imported data) or `yahoo` (live: Yahoo Finance chart API and the Treasury's CSV)",
    ),
  MARKET_BASE_URL: optionalText
    .pipe(httpUrl.optional())
    .describe('chart API base for `yahoo` (unset: `https://query1.finance.yahoo.com`)'),
  TREASURY_BASE_URL: optionalText
    .pipe(httpUrl.optional())
    .describe(
      'where `yahoo` reads the daily par yield curve CSV (unset: `https://home.treasury.gov`)',
    ),
  MARKET_TIMEOUT_MS: int(100, 600_000)
    .default(15_000)
    .describe('per request to the live market provider'),
  ENRICHMENT_PROVIDER: z
    .enum(['offline', 'musicbrainz'])
    .default('offline')
    .describe(
      'catalog enrichment (see Catalog, Enrichment providers): `offline` (the dataset in `fixtures/catalog/recordings.json`) or `musicbrainz` (the MusicBrainz web service)',
    ),
  MUSICBRAINZ_URL: optionalText
    .pipe(httpUrl.optional())
    .describe(
      'MusicBrainz server root (requests go to `…/ws/2/…`); a mirror may be named here (unset: `https://musicbrainz.org`)',
    ),
  MUSICBRAINZ_USER_AGENT: headerText.describe(
    'the `User-Agent` of every MusicBrainz request, which MusicBrainz requires to be `Application/version ( contact )` (unset: `royalty-engine/<version> ( MUSICBRAINZ_CONTACT )`)',
  ),
  MUSICBRAINZ_CONTACT: headerText.describe(
    'an e-mail address or URL for the default User-Agent; with `musicbrainz`, this or `MUSICBRAINZ_USER_AGENT` is required',
  ),
  MUSICBRAINZ_MIN_INTERVAL_MS: int(0, 60_000)
    .default(1000)
    .describe(
      'at least this long between two MusicBrainz requests of one process (their limit: 1 per second per client)',
    ),
  ENRICHMENT_TIMEOUT_MS: int(100, 600_000)
    .default(15_000)
    .describe('per request to the enrichment provider'),
  ANALYTICS_DIR: optionalText.describe(
    'the per-organization analytics databases (derived data, rebuilt when missing) and sandbox scratch files (unset: `DATA_DIR/analytics`)',
  ),
  ANALYTICS_THREADS: int(1, 64)
    .default(2)
    .describe("DuckDB threads of each organization's database"),
  ANALYTICS_MEMORY_MB: int(64, 1_048_576)
    .default(1024)
    .describe(
      "DuckDB memory limit of each organization's database (spills to its `tmp/` beyond it)",
    ),
  ANALYTICS_RESULT_CACHE_MB: int(0, 65_536)
    .default(128)
    .describe(
      "answers kept in memory, keyed by query and data version, each counted at its size (its strings' characters plus a few bytes a value); an answer larger than this is not kept (0: none)",
    ),
  CUBE_SYNC_TIMEOUT_MS: int(1, 600_000)
    .default(25_000)
    .describe(
      'the synchronous window of `cube.query` and `cube.sqlQuery`; past it TIMEOUT, and the query goes on for the poll',
    ),
  CUBE_ASYNC_WAIT_MS: int(0, 60_000)
    .default(1_000)
    .describe('how long `queryAsync`/`queryPoll` wait for the answer before replying `processing`'),
  CUBE_QUERY_TIMEOUT_MS: int(100, 3_600_000)
    .default(300_000)
    .describe('a cube query still running after this is interrupted'),
  CUBE_SQL_TIMEOUT_MS: int(100, 600_000)
    .default(20_000)
    .describe('`sqlQuery`: a statement still running after this is interrupted'),
  CUBE_SQL_MEMORY_MB: int(32, 65_536)
    .default(512)
    .describe(
      '`sqlQuery`: DuckDB memory limit of the sandbox; the sandbox process is killed at this plus 384 MB resident',
    ),
  CUBE_SQL_MAX_ROWS: int(1, 1_000_000).default(50_000).describe('`sqlQuery`: most result rows'),
  CUBE_SQL_MAX_RESULT_MB: int(1, 4_096)
    .default(64)
    .describe(
      '`sqlQuery`: the most a result may weigh (about its JSON size); above it SQL_QUERY_TOO_MANY_ROWS',
    ),
  CUBE_SQL_THREADS: int(1, 16).default(1).describe('`sqlQuery`: DuckDB threads of the sandbox'),
  /** sqlQuery sandboxes running at once; unset: one a core, within half the memory (sandboxSlots) */
  CUBE_SQL_CONCURRENCY: int(1, 256)
    .optional()
    .describe(
      '`sqlQuery`: sandboxes running at once per process (1 … 256); the others wait (unset: one a core, within half the memory at `CUBE_SQL_MEMORY_MB` + 384 MB each)',
    ),
  CUBE_SESSION_TTL_SECONDS: int(60, 86_400)
    .default(3_600)
    .describe('lifetime of an embed session token (`cube.getSession`)'),
  MCP_TIMEOUT_MS: int(10, 600_000)
    .default(55_000)
    .describe("a tool-server request's time limit; past it the tool answers `TOOL_TIMEOUT`"),
  MCP_MAX_ROWS: int(1, 100_000)
    .default(200)
    .describe(
      'rows (array items) a tool result keeps; the rest are left out with a note of how many',
    ),
  EXPORT_PART_ROWS: int(1, 10_000_000)
    .default(1_000_000)
    .describe(
      'rows per export file: larger exports are split into parts (XLSX parts hold at most 250,000)',
    ),
  EXPORT_RETENTION_HOURS: int(1, 87_600)
    .default(168)
    .describe(
      'how long a completed export keeps its files (1 … 87600); then it is `expired` and its files are deleted (see Exports)',
    ),
  NODE_ENV: z
    .enum(['development', 'production', 'test'])
    .default('development')
    .describe('`production`, `development` or `test`'),
  FX_RATES_URL: z
    .string()
    .trim()
    .default('https://www.ecb.europa.eu/stats/eurofxref/eurofxref.zip')
    .pipe(
      z.union([
        z.literal(''),
        z.url({
          protocol: /^https?$/,
          error: 'must be an http:// or https:// URL, or empty for no scheduled import',
        }),
      ]),
    )
    .describe(
      'exchange rates loaded by the scheduled `fx_rates_import` job; empty: no scheduled import',
    ),
  FX_RATES_CRON: z
    .string()
    .trim()
    .default('0 17 * * 1-5')
    .superRefine((cron, ctx) => {
      const problem = cron === '' ? undefined : cronProblem(cron);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .describe('when (UTC, five cron fields); empty: no scheduled import'),
});

export type Env = Record<string, string | undefined>;

export interface SettingReference {
  name: string;
  /** the default as written in the environment; undefined: unset (the description says what that means) */
  default: string | undefined;
  description: string;
}

/** A setting's declared default: a `.default()`, possibly before a pipe (FX_RATES_URL). */
function declaredDefault(schema: z.ZodType): string | undefined {
  const def = schema._zod.def as { type: string; defaultValue?: unknown; in?: z.ZodType };
  if (def.type === 'default') return String(def.defaultValue);
  if (def.type === 'pipe' && def.in) return declaredDefault(def.in);
  return undefined;
}

/** Every environment variable with its default and its `.describe()`: the configuration reference is generated from this. */
export function settingsReference(): SettingReference[] {
  return Object.entries(envSchema.shape).map(([name, schema]) => ({
    name,
    default: declaredDefault(schema),
    description: schema.description ?? '',
  }));
}

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
  threads: {
    maxThreads: number;
    maxQueue: number;
    idleTimeoutMs: number;
    maxOldGenerationMb: number;
    warm: number;
  };
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

export const rateLimitGroups = [
  'urls',
  'sql',
  'cube',
  'exports',
  'invitations',
  'providers',
] as const;
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
  sql: {
    threads: number;
    memoryMb: number;
    timeoutMs: number;
    maxRows: number;
    maxResultMb: number;
    concurrency: number | undefined;
  };
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
const packageInfo = JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as {
  name: string;
  version: string;
};

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
  return Object.fromEntries(
    Object.entries(env).filter(
      ([key, value]) => EMPTY_IS_A_VALUE.has(key) || (value !== undefined && value.trim() !== ''),
    ),
  );
}

type ParsedEnv = z.infer<typeof envSchema>;

/** The environment checked against its schema, every problem listed in one error. */
function parseEnv(env: Env): ParsedEnv {
  const parsed = envSchema.safeParse(withoutEmpty(env));
  if (!parsed.success) {
    const lines = parsed.error.issues.map(
      (i) => `${i.path.join('.') || '(environment)'}: ${i.message}`,
    );
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return parsed.data;
}

/** The rules between variables that each variable's schema cannot see. */
function checkCombinations(e: ParsedEnv): void {
  if (
    e.ENRICHMENT_PROVIDER === 'musicbrainz' &&
    !e.MUSICBRAINZ_USER_AGENT &&
    !e.MUSICBRAINZ_CONTACT
  ) {
    throw new ConfigError(
      'Invalid configuration: ENRICHMENT_PROVIDER=musicbrainz needs MUSICBRAINZ_CONTACT (an e-mail address or URL) or MUSICBRAINZ_USER_AGENT',
    );
  }
  if (e.HTTP_HEADERS_TIMEOUT_MS > e.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError(
      'Invalid configuration: HTTP_HEADERS_TIMEOUT_MS must not be above HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)',
    );
  }
  // an idle connection is one whose answer is being computed too: the synchronous analytics window must fit
  if (e.HTTP_IDLE_TIMEOUT_MS <= e.CUBE_SYNC_TIMEOUT_MS) {
    throw new ConfigError(
      'Invalid configuration: HTTP_IDLE_TIMEOUT_MS must be above CUBE_SYNC_TIMEOUT_MS (a query answers within that window, the connection quiet meanwhile)',
    );
  }
  if (e.AI_PROVIDER === 'openai' && !e.AI_BASE_URL) {
    throw new ConfigError('Invalid configuration: AI_PROVIDER=openai needs AI_BASE_URL');
  }
}

/** S3 settings: all four of endpoint, bucket and keys, or none (the embedded server). */
function s3Settings(e: ParsedEnv): S3Settings | undefined {
  const s3Given = [e.S3_ENDPOINT, e.S3_BUCKET, e.S3_ACCESS_KEY_ID, e.S3_SECRET_ACCESS_KEY].some(
    (v) => v !== undefined,
  );
  if (!s3Given) return undefined;
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
    throw new ConfigError(
      `Invalid configuration: S3 is partly configured; also set ${missing.join(', ')}`,
    );
  }
  return {
    endpoint: e.S3_ENDPOINT!,
    bucket: e.S3_BUCKET!,
    region: e.S3_REGION ?? 'us-east-1',
    accessKeyId: e.S3_ACCESS_KEY_ID!,
    secretAccessKey: e.S3_SECRET_ACCESS_KEY!,
    forcePathStyle: e.S3_FORCE_PATH_STYLE ?? true,
  };
}

/** Each section of the configuration built from the checked environment, in one table. */
const CONFIG_SECTIONS: { [K in keyof Config]: (e: ParsedEnv) => Config[K] } = {
  port: (e) => e.PORT,
  host: (e) => e.HOST,
  dataDir: (e) => path.resolve(e.DATA_DIR),
  publicUrl: (e) => e.PUBLIC_URL,
  databaseUrl: (e) => e.DATABASE_URL,
  databasePoolSize: (e) => e.DATABASE_POOL_SIZE,
  s3: s3Settings,
  embeddedBucket: (e) => e.S3_BUCKET ?? 'royalty',
  logLevel: (e) => e.LOG_LEVEL,
  demoBootstrap: (e) => e.DEMO_BOOTSTRAP,
  worker: (e) => ({ concurrency: e.WORKER_CONCURRENCY, pollIntervalMs: e.WORKER_POLL_INTERVAL_MS }),
  ingest: (e) => ({
    jobTimeoutMs: e.INGEST_JOB_TIMEOUT_MS,
    orgConcurrency: e.INGEST_ORG_CONCURRENCY ?? Math.max(1, e.WORKER_CONCURRENCY - 1),
  }),
  shutdownGraceMs: (e) => e.SHUTDOWN_GRACE_MS,
  threads: (e) => {
    const maxThreads = e.THREADS_MAX ?? 2;
    return {
      maxThreads,
      maxQueue: e.THREADS_MAX_QUEUE,
      idleTimeoutMs: e.THREADS_IDLE_TIMEOUT_MS,
      maxOldGenerationMb: e.THREADS_MAX_OLD_GENERATION_MB,
      // a burst needs every thread: one started in it loads its modules while statements wait
      warm: Math.min(e.THREADS_WARM ?? maxThreads, maxThreads),
    };
  },
  bodyLimitBytes: (e) => e.BODY_LIMIT_BYTES,
  httpMaxHeaderBytes: (e) => e.HTTP_MAX_HEADER_BYTES,
  maxBatchSize: (e) => e.MAX_BATCH_SIZE,
  http: (e) => ({
    headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
    uploadTimeoutMs: e.HTTP_UPLOAD_TIMEOUT_MS,
    idleTimeoutMs: e.HTTP_IDLE_TIMEOUT_MS,
    keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
  }),
  trustProxy: (e) => e.TRUST_PROXY,
  rateLimits: (e) => ({
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
  }),
  corsOrigins: (e) => e.CORS_ORIGINS,
  invitationTtlHours: (e) => e.INVITATION_TTL_HOURS,
  oauth: (e) => ({
    loginFailuresPerAccount: e.OAUTH_LOGIN_FAILURES_PER_ACCOUNT,
    loginFailuresPerAddress: e.OAUTH_LOGIN_FAILURES_PER_ADDRESS,
    loginWindowSeconds: e.OAUTH_LOGIN_WINDOW_SECONDS,
    registrationsPerAddress: e.OAUTH_REGISTRATIONS_PER_ADDRESS,
    tokenRequestsPerAddress: e.OAUTH_TOKEN_REQUESTS_PER_ADDRESS,
    unusedClientTtlHours: e.OAUTH_UNUSED_CLIENT_TTL_HOURS,
    metadataDocumentHosts: e.OAUTH_METADATA_DOCUMENT_HOSTS,
  }),
  ai: (e) => ({
    provider: e.AI_PROVIDER,
    baseUrl: e.AI_BASE_URL?.replace(/\/+$/, ''),
    apiKey: e.AI_API_KEY,
    model: e.AI_MODEL ?? 'gpt-4o-mini',
    embeddingModel: e.AI_EMBEDDING_MODEL,
    timeoutMs: e.AI_TIMEOUT_MS,
  }),
  market: (e) => ({
    provider: e.MARKET_PROVIDER,
    baseUrl: (e.MARKET_BASE_URL ?? 'https://query1.finance.yahoo.com').replace(/\/+$/, ''),
    treasuryBaseUrl: (e.TREASURY_BASE_URL ?? 'https://home.treasury.gov').replace(/\/+$/, ''),
    timeoutMs: e.MARKET_TIMEOUT_MS,
  }),
  analytics: (e) => ({
    dir: path.resolve(e.ANALYTICS_DIR ?? path.join(e.DATA_DIR, 'analytics')),
    threads: e.ANALYTICS_THREADS,
    memoryMb: e.ANALYTICS_MEMORY_MB,
    resultCacheMb: e.ANALYTICS_RESULT_CACHE_MB,
    syncTimeoutMs: e.CUBE_SYNC_TIMEOUT_MS,
    asyncWaitMs: e.CUBE_ASYNC_WAIT_MS,
    queryTimeoutMs: e.CUBE_QUERY_TIMEOUT_MS,
    sql: {
      threads: e.CUBE_SQL_THREADS,
      memoryMb: e.CUBE_SQL_MEMORY_MB,
      timeoutMs: e.CUBE_SQL_TIMEOUT_MS,
      maxRows: e.CUBE_SQL_MAX_ROWS,
      maxResultMb: e.CUBE_SQL_MAX_RESULT_MB,
      concurrency: e.CUBE_SQL_CONCURRENCY,
    },
    sessionTtlSeconds: e.CUBE_SESSION_TTL_SECONDS,
  }),
  production: (e) => e.NODE_ENV === 'production',
  fxImport: (e) => ({ url: e.FX_RATES_URL, cron: e.FX_RATES_CRON }),
  exports: (e) => ({ partRows: e.EXPORT_PART_ROWS, retentionHours: e.EXPORT_RETENTION_HOURS }),
  mcp: (e) => ({ timeoutMs: e.MCP_TIMEOUT_MS, maxRows: e.MCP_MAX_ROWS }),
  enrichment: (e) => ({
    provider: e.ENRICHMENT_PROVIDER,
    timeoutMs: e.ENRICHMENT_TIMEOUT_MS,
    musicbrainz: {
      baseUrl: (e.MUSICBRAINZ_URL ?? 'https://musicbrainz.org').replace(/\/+$/, ''),
      userAgent:
        e.MUSICBRAINZ_USER_AGENT ??
        `${packageInfo.name}/${packageInfo.version} ( ${e.MUSICBRAINZ_CONTACT ?? 'contact not configured'} )`,
      minIntervalMs: e.MUSICBRAINZ_MIN_INTERVAL_MS,
    },
  }),
};

export function loadConfig(env: Env = process.env): Config {
  const e = parseEnv(env);
  checkCombinations(e);
  const config: Partial<Record<keyof Config, unknown>> = {};
  for (const key of Object.keys(CONFIG_SECTIONS) as (keyof Config)[]) {
    config[key] = CONFIG_SECTIONS[key](e);
  }
  return config as Config;
}
