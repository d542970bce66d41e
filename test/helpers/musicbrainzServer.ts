// A local HTTP server speaking the MusicBrainz web service v2 JSON format (/ws/2/isrc/<isrc>,
// /ws/2/recording?query=<lucene>, /ws/2/recording/<mbid>?inc=…) over a small dataset, for the
// provider's tests. It parses the Lucene query for real (phrases, escapes, AND/OR/NOT, groups),
// so a query that was not escaped properly is answered 400 or finds the wrong thing, exactly as
// it would there. It records every request and can answer 503 with Retry-After, hang, or send
// a body that is not JSON.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MbCredit {
  name: string;
  joinphrase: string;
  artist: { id: string; name: string; 'sort-name': string };
}

export interface MbRelease {
  id: string;
  title: string;
  status: 'Official' | 'Promotion' | 'Bootleg';
  date: string;
  country: string;
  'artist-credit': MbCredit[];
  'cover-art-archive': {
    artwork: boolean;
    front: boolean;
    back: boolean;
    count: number;
    darkened: boolean;
  };
}

export interface MbWriter {
  type: 'composer' | 'lyricist' | 'writer';
  name: string;
}

export interface MbRecordingFixture {
  id: string;
  title: string;
  length: number;
  credit: MbCredit[];
  firstReleaseDate: string;
  isrcs: string[];
  releases: MbRelease[];
  genres: { name: string; count: number }[];
  tags: { name: string; count: number }[];
  work: { id: string; title: string; writers: MbWriter[] } | null;
  /** recording-level artist relationships (producer, …) */
  artistRels: { type: string; name: string }[];
}

function artist(name: string, id: string, sortName?: string): MbCredit['artist'] {
  return { id, name, 'sort-name': sortName ?? name };
}

function credit(...parts: [string, string, string][]): MbCredit[] {
  // [name, artist id, joinphrase]
  return parts.map(([name, id, joinphrase]) => ({ name, joinphrase, artist: artist(name, id) }));
}

function release(
  id: string,
  title: string,
  date: string,
  status: MbRelease['status'],
  c: MbCredit[],
  front: boolean,
): MbRelease {
  return {
    id,
    title,
    status,
    date,
    country: 'XW',
    'artist-credit': c,
    'cover-art-archive': {
      artwork: front,
      front,
      back: false,
      count: front ? 1 : 0,
      darkened: false,
    },
  };
}

const BRIGHT = credit(['Bright Harbour', '0f5c7e3a-1b2d-4c8e-9f60-2a4b6c8d0e12', '']);
const KESTREL = credit(['Kestrel Road', '5d2e9a41-7c3b-4f6d-8e1a-9b0c2d4e6f81', '']);
const ORLA_FEAT_MARA = credit(
  ['Orla Finn', 'a3c1e5f7-9b2d-4e6f-8a0c-1e3f5a7b9c2d', ' feat. '],
  ['Mara Velde', 'b4d2f6a8-0c3e-4f7a-9b1d-2f4a6b8c0d3e', ''],
);
const HOSTILE_ARTIST = credit([
  'AC/DC-ish & Co. (Tribute)',
  'c5e3a7b9-1d4f-4a8b-8c2e-3a5b7c9d1e4f',
  '',
]);

/** The server's catalog: the fixture of the provider tests. */
export const musicBrainzRecordings: MbRecordingFixture[] = [
  {
    id: '3e1f6d2a-8b4c-4d7e-9a05-6c2b8e4f1a93',
    title: 'Midnight Drive',
    length: 214_000,
    credit: BRIGHT,
    firstReleaseDate: '2019-05',
    isrcs: ['USRC12250611'],
    releases: [
      release(
        '7a2c4e6f-8b1d-4f3a-9c5e-0d2f4a6b8c1e',
        'Harbour Lights',
        '2020-02-14',
        'Official',
        BRIGHT,
        true,
      ),
      release(
        '9c4e6a8b-0d3f-4b5c-8e7a-1f3b5d7e9a2c',
        'Midnight Drive',
        '2019-05',
        'Official',
        BRIGHT,
        true,
      ),
      release(
        '1e6a8c0d-2f5b-4d7e-9a9c-3b5d7f9a1c4e',
        'Midnight Drive (promo)',
        '2019-04-20',
        'Promotion',
        BRIGHT,
        false,
      ),
    ],
    genres: [
      { name: 'pop', count: 1 },
      { name: 'indie pop', count: 4 },
    ],
    tags: [
      { name: 'indie pop', count: 4 },
      { name: 'driving', count: 1 },
    ],
    work: {
      id: '4f8b0d2e-6a9c-4e1f-8b3d-5c7e9a1b3d5f',
      title: 'Midnight Drive',
      writers: [
        { type: 'composer', name: 'Orla Finn' },
        { type: 'lyricist', name: 'Mara Velde' },
        { type: 'composer', name: 'Ines Calder' },
      ],
    },
    artistRels: [{ type: 'producer', name: 'Rowan Pike' }],
  },
  {
    id: '6b3d5f7a-9c2e-4a4b-8d6f-8e0a2c4e6b8d',
    title: 'Midnight Drive (Live)',
    length: 251_000,
    credit: BRIGHT,
    firstReleaseDate: '2022-09-30',
    isrcs: ['USRC12299001'],
    releases: [
      release(
        '2f7b9d1e-3a6c-4e8f-8b0d-4c6e8a0b2d5f',
        'Live at the Roundhouse',
        '2022-09-30',
        'Official',
        BRIGHT,
        false,
      ),
    ],
    genres: [{ name: 'indie pop', count: 1 }],
    tags: [],
    work: null,
    artistRels: [],
  },
  {
    id: '8d5f7b9c-1e4a-4c6d-9f8b-0a2c4e6a8d0f',
    title: 'Midnight Drive',
    length: 198_000,
    credit: KESTREL,
    firstReleaseDate: '2011-03-01',
    isrcs: ['CAA1B1100007'],
    releases: [
      release(
        '3a8c0e2f-4b7d-4f9a-8c1e-5d7f9b1c3e6a',
        'Backroads',
        '2011-03-01',
        'Official',
        KESTREL,
        true,
      ),
    ],
    genres: [{ name: 'country', count: 2 }],
    tags: [{ name: 'country', count: 2 }],
    work: null,
    artistRels: [],
  },
  {
    id: 'a1c3e5a7-b9d2-4f4a-8c6e-d8f0a2b4c6e8',
    title: 'Ember (feat. Mara Velde)',
    length: 189_000,
    credit: ORLA_FEAT_MARA,
    firstReleaseDate: '2021',
    isrcs: ['GBQZ42466801', 'GBQZ42166801'],
    releases: [
      release(
        '4b9d1f3a-5c8e-4a0b-9d2f-6e8a0c2d4f7b',
        'Ember',
        '2021',
        'Official',
        credit(['Orla Finn', 'a3c1e5f7-9b2d-4e6f-8a0c-1e3f5a7b9c2d', '']),
        true,
      ),
    ],
    genres: [
      { name: 'folk', count: 3 },
      { name: 'singer-songwriter', count: 3 },
    ],
    tags: [{ name: 'folk', count: 3 }],
    work: {
      id: '5c0e2a4b-6d9f-4b1c-8e3a-7f9b1d3e5a8c',
      title: 'Ember',
      writers: [{ type: 'writer', name: 'Orla Finn' }],
    },
    artistRels: [],
  },
  {
    id: 'c2e4a6c8-d0f3-4b5d-9e7f-a9b1c3d5e7f9',
    title: 'He said "Hi": (Part 1) OR 1=1 && more!',
    length: 120_000,
    credit: HOSTILE_ARTIST,
    firstReleaseDate: '2015-07-04',
    isrcs: ['USAB11500042'],
    releases: [
      release(
        '6d1f3b5c-7e0a-4c2d-9f4b-8a0c2e4f6b9d',
        'Escapes [Vol. 1]',
        '2015-07-04',
        'Official',
        HOSTILE_ARTIST,
        false,
      ),
    ],
    genres: [],
    tags: [],
    work: null,
    artistRels: [],
  },
];

export interface RecordedRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  userAgent: string | undefined;
  /** performance.now() when the request arrived (same clock as the provider's spacing) */
  at: number;
  /** the Lucene query as the server understood it: its field clauses in order */
  clauses?: { field: string; value: string }[];
}

type Fault =
  | { kind: 'status'; status: number; retryAfter?: string; body?: string }
  | { kind: 'hang' }
  | { kind: 'malformed' };

export interface MusicBrainzServer {
  /** http://127.0.0.1:<port> */
  url: string;
  requests: RecordedRequest[];
  /** the next n requests are answered with this status (503 with Retry-After, 400, 500, …) */
  failNext(n: number, status: number, options?: { retryAfter?: string; body?: string }): void;
  /** the next n requests are never answered */
  hangNext(n: number): void;
  /** the next n requests get a 200 whose body is not JSON */
  malformedNext(n: number): void;
  close(): Promise<void>;
}

// --- Lucene, as much as the recording search needs ----------------------------------------------

type Node =
  | { op: 'and' | 'or'; l: Node; r: Node }
  | { op: 'not'; x: Node }
  | { op: 'clause'; field: string; value: string; phrase: boolean };

class QueryError extends Error {}

const SPECIAL = new Set([...'+-&|!(){}[]^"~*?:\\/']);

export function parseLucene(text: string): Node {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const atKeyword = (k: string): boolean => {
    ws();
    return (
      text.startsWith(k, i) && (i + k.length === text.length || /[\s(]/.test(text[i + k.length]!))
    );
  };
  const keyword = (k: string): boolean => {
    if (!atKeyword(k)) return false;
    i += k.length;
    return true;
  };
  const readEscaped = (stop: (c: string) => boolean, inPhrase: boolean): string => {
    let out = '';
    while (i < text.length && !stop(text[i]!)) {
      const c = text[i]!;
      if (c === '\\') {
        if (i + 1 >= text.length) throw new QueryError('dangling escape');
        out += text[i + 1];
        i += 2;
        continue;
      }
      if (!inPhrase && SPECIAL.has(c)) throw new QueryError(`unexpected '${c}' at ${i}`);
      out += c;
      i++;
    }
    return out;
  };
  const clause = (): Node => {
    ws();
    let field = 'recording';
    const m = /^([a-z][a-z-]*):/.exec(text.slice(i));
    if (m) {
      field = m[1]!;
      i += m[0].length;
    }
    if (text[i] === '"') {
      i++;
      const value = readEscaped((c) => c === '"', true);
      if (text[i] !== '"') throw new QueryError('unterminated phrase');
      i++;
      return { op: 'clause', field, value, phrase: true };
    }
    const value = readEscaped((c) => /[\s)]/.test(c), false);
    if (value === '') throw new QueryError(`empty term at ${i}`);
    return { op: 'clause', field, value, phrase: false };
  };
  const unary = (): Node => {
    if (keyword('NOT')) return { op: 'not', x: unary() };
    ws();
    if (text[i] === '(') {
      i++;
      const inner = or();
      ws();
      if (text[i] !== ')') throw new QueryError('unbalanced parenthesis');
      i++;
      return inner;
    }
    return clause();
  };
  const and = (): Node => {
    let left = unary();
    for (;;) {
      if (keyword('AND')) {
        left = { op: 'and', l: left, r: unary() };
        continue;
      }
      ws();
      // juxtaposition: Lucene's default operator, OR
      if (i < text.length && text[i] !== ')' && !atKeyword('OR')) {
        left = { op: 'or', l: left, r: unary() };
        continue;
      }
      return left;
    }
  };
  const or = (): Node => {
    let left = and();
    while (keyword('OR')) left = { op: 'or', l: left, r: and() };
    return left;
  };
  const node = or();
  ws();
  if (i !== text.length) throw new QueryError(`unexpected '${text[i]}' at ${i}`);
  return node;
}

function clausesOf(n: Node): { field: string; value: string }[] {
  if (n.op === 'clause') return [{ field: n.field, value: n.value }];
  if (n.op === 'not') return clausesOf(n.x);
  return [...clausesOf(n.l), ...clausesOf(n.r)];
}

function fold(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

function creditName(c: MbCredit[]): string {
  return c.map((p) => p.name + p.joinphrase).join('');
}

/** Whether the recording matches, and how many clauses matched only in part (for the score). */
function evaluate(n: Node, rec: MbRecordingFixture): { match: boolean; partial: number } {
  switch (n.op) {
    case 'and': {
      const a = evaluate(n.l, rec);
      const b = evaluate(n.r, rec);
      return { match: a.match && b.match, partial: a.partial + b.partial };
    }
    case 'or': {
      const a = evaluate(n.l, rec);
      const b = evaluate(n.r, rec);
      if (a.match && b.match) return { match: true, partial: Math.min(a.partial, b.partial) };
      return a.match ? a : b.match ? b : { match: false, partial: 0 };
    }
    case 'not':
      return { match: !evaluate(n.x, rec).match, partial: 0 };
    case 'clause': {
      const v = fold(n.value);
      const against = (s: string): { match: boolean; partial: number } => {
        const f = fold(s);
        if (f === v) return { match: true, partial: 0 };
        return { match: v !== '' && ` ${f} `.includes(` ${v} `), partial: 1 };
      };
      if (n.field === 'recording') return against(rec.title);
      if (n.field === 'artist' || n.field === 'artistname') {
        const exact = rec.credit.some((c) => fold(c.name) === v);
        return exact ? { match: true, partial: 0 } : against(creditName(rec.credit));
      }
      if (n.field === 'isrc')
        return { match: rec.isrcs.includes(n.value.toUpperCase()), partial: 0 };
      return { match: false, partial: 0 };
    }
  }
}

// --- the JSON shapes --------------------------------------------------------------------------------

function releaseJson(r: MbRelease, withCredit: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: r.id,
    title: r.title,
    status: r.status,
    'status-id': '4e304316-386d-3409-af2e-78857eec5cfe',
    date: r.date,
    country: r.country,
    'release-events': [
      {
        date: r.date,
        area: {
          id: '525d4e18-3d00-31b9-a58b-a146a916de8f',
          name: '[Worldwide]',
          'iso-3166-1-codes': ['XW'],
        },
      },
    ],
    'text-representation': { language: 'eng', script: 'Latn' },
    quality: 'normal',
    barcode: null,
    disambiguation: '',
    packaging: null,
    'cover-art-archive': r['cover-art-archive'],
  };
  if (withCredit) out['artist-credit'] = r['artist-credit'];
  return out;
}

function lookupJson(rec: MbRecordingFixture, inc: Set<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: rec.id,
    title: rec.title,
    length: rec.length,
    video: false,
    disambiguation: '',
    'first-release-date': rec.firstReleaseDate,
  };
  if (inc.has('artist-credits') || inc.has('artists')) out['artist-credit'] = rec.credit;
  if (inc.has('releases'))
    out.releases = rec.releases.map((r) => releaseJson(r, inc.has('artist-credits')));
  if (inc.has('isrcs')) out.isrcs = rec.isrcs;
  if (inc.has('genres'))
    out.genres = rec.genres.map((g) => ({ ...g, id: `genre-${g.name}`, disambiguation: '' }));
  if (inc.has('tags')) out.tags = rec.tags;
  if (inc.has('work-rels') || inc.has('artist-rels')) {
    const relations: Record<string, unknown>[] = [];
    if (inc.has('artist-rels')) {
      for (const a of rec.artistRels) {
        relations.push({
          type: a.type,
          'target-type': 'artist',
          direction: 'backward',
          attributes: [],
          artist: artist(a.name, `artist-${fold(a.name)}`),
        });
      }
    }
    if (inc.has('work-rels') && rec.work) {
      const work: Record<string, unknown> = {
        id: rec.work.id,
        title: rec.work.title,
        type: 'Song',
        language: 'eng',
        iswcs: [],
        disambiguation: '',
      };
      if (inc.has('work-level-rels')) {
        work.relations = rec.work.writers.map((w) => ({
          type: w.type,
          'target-type': 'artist',
          direction: 'backward',
          attributes: [],
          artist: artist(w.name, `artist-${fold(w.name)}`),
        }));
      }
      relations.push({
        type: 'performance',
        'target-type': 'work',
        direction: 'forward',
        attributes: [],
        work,
      });
    }
    out.relations = relations;
  }
  return out;
}

function searchJson(rec: MbRecordingFixture, score: number): Record<string, unknown> {
  return {
    id: rec.id,
    score,
    title: rec.title,
    length: rec.length,
    video: null,
    'artist-credit': rec.credit,
    'first-release-date': rec.firstReleaseDate,
    releases: rec.releases.map((r) => ({
      ...releaseJson(r, true),
      count: 1,
      'release-group': {
        id: `rg-${r.id}`,
        'type-id': 'd6038452-8ee0-3f68-affc-2de9a1ede0b9',
        title: r.title,
        'primary-type': 'Single',
      },
      'track-count': 1,
      media: [
        {
          position: 1,
          format: 'Digital Media',
          track: [{ id: `t-${r.id}`, number: '1', title: rec.title, length: rec.length }],
          'track-count': 1,
          'track-offset': 0,
        },
      ],
    })),
    isrcs: rec.isrcs,
    tags: rec.tags,
  };
}

// --- the server --------------------------------------------------------------------------------------

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type':
      typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8',
    ...headers,
  });
  res.end(text);
}

const HELP = 'For usage, please see: https://musicbrainz.org/development/mmd';

export async function startMusicBrainzServer(
  recordings: MbRecordingFixture[] = musicBrainzRecordings,
): Promise<MusicBrainzServer> {
  const requests: RecordedRequest[] = [];
  const faults: Fault[] = [];

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const entry: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      params: Object.fromEntries(url.searchParams),
      userAgent: req.headers['user-agent'],
      at: performance.now(),
    };
    requests.push(entry);
    const fault = faults.shift();
    if (fault?.kind === 'hang') return; // no answer, ever
    if (fault?.kind === 'malformed')
      return send(res, 200, '{"recordings": [{"id": "3e1f6d2a', {
        'content-type': 'application/json',
      });
    if (fault?.kind === 'status') {
      const body = fault.body ?? {
        error:
          fault.status === 503
            ? 'Your requests are exceeding the allowable rate limit. Please see http://wiki.musicbrainz.org/XMLWebService for more information.'
            : `HTTP ${fault.status}`,
        help: HELP,
      };
      return send(
        res,
        fault.status,
        body,
        fault.retryAfter ? { 'retry-after': fault.retryAfter } : {},
      );
    }
    const ua = entry.userAgent ?? '';
    if (!/\S+\/\S+/.test(ua) || ua === 'node')
      return send(res, 403, { error: 'Please provide a meaningful User-Agent', help: HELP });
    if (req.method !== 'GET') return send(res, 405, { error: 'Method not allowed', help: HELP });
    if (url.searchParams.get('fmt') !== 'json') {
      // the service's default is XML
      res.writeHead(200, { 'content-type': 'application/xml; charset=utf-8' });
      return void res.end(
        '<?xml version="1.0" encoding="UTF-8"?><metadata xmlns="http://musicbrainz.org/ns/mmd-2.0#"/>',
      );
    }
    const inc = new Set((url.searchParams.get('inc') ?? '').split(/[+ ]/).filter(Boolean));
    let m: RegExpExecArray | null;
    if ((m = /^\/ws\/2\/isrc\/([^/]+)$/.exec(url.pathname))) {
      const isrc = decodeURIComponent(m[1]!);
      if (!/^[A-Z]{2}[A-Z0-9]{3}\d{7}$/.test(isrc))
        return send(res, 400, { error: `Invalid isrc.`, help: HELP });
      const found = recordings.filter((r) => r.isrcs.includes(isrc));
      if (found.length === 0) return send(res, 404, { error: 'Not Found', help: HELP });
      return send(res, 200, { isrc, recordings: found.map((r) => lookupJson(r, inc)) });
    }
    if ((m = /^\/ws\/2\/recording\/([0-9a-f-]{36})$/.exec(url.pathname))) {
      const rec = recordings.find((r) => r.id === m![1]);
      if (!rec) return send(res, 404, { error: 'Not Found', help: HELP });
      return send(res, 200, lookupJson(rec, inc));
    }
    if (url.pathname === '/ws/2/recording') {
      const query = url.searchParams.get('query');
      if (!query) return send(res, 400, { error: 'Missing required parameter query', help: HELP });
      let node: Node;
      try {
        node = parseLucene(query);
      } catch (error) {
        if (error instanceof QueryError)
          return send(res, 400, { error: `Invalid query: ${error.message}`, help: HELP });
        throw error;
      }
      entry.clauses = clausesOf(node);
      const limit = Math.min(Math.max(Number(url.searchParams.get('limit') ?? 25) || 25, 1), 100);
      const offset = Math.max(Number(url.searchParams.get('offset') ?? 0) || 0, 0);
      const hits = recordings
        .map((r) => ({ r, e: evaluate(node, r) }))
        .filter((x) => x.e.match)
        .map((x) => ({ r: x.r, score: Math.max(100 - 15 * x.e.partial, 40) }))
        .sort((a, b) => b.score - a.score || a.r.id.localeCompare(b.r.id));
      return send(res, 200, {
        created: new Date().toISOString(),
        count: hits.length,
        offset,
        recordings: hits.slice(offset, offset + limit).map((h) => searchJson(h.r, h.score)),
      });
    }
    return send(res, 400, { error: 'Invalid resource', help: HELP });
  };

  const server: Server = createServer((req, res) => {
    try {
      handle(req, res);
    } catch (error) {
      send(res, 500, { error: String(error) });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    failNext(n, status, options = {}) {
      for (let k = 0; k < n; k++) faults.push({ kind: 'status', status, ...options });
    },
    hangNext(n) {
      for (let k = 0; k < n; k++) faults.push({ kind: 'hang' });
    },
    malformedNext(n) {
      for (let k = 0; k < n; k++) faults.push({ kind: 'malformed' });
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}
