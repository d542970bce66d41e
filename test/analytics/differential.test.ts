// Differential fuzz of cube.query: random valid queries (a fixed seed, a fixed count) over a small
// varied dataset, each answered with and without usePreagg (must be identical) and
// compared with an oracle written here in plain JavaScript over the rows seeded below, for the
// members whose definition is simple (sums, counts, distinct statements, plain dimensions, date
// buckets, tm) and every filter operator with Cube's NULL rules (docs/spec/
// cube-query-semantics.md), the default order and docs/analytics.md's tie-breaking. Money is
// compared as exact decimal text. A failing query is shrunk to a minimal one before it is reported.
import t, { type Test } from 'tap';
import { decimalText } from '../../src/analytics/engine.ts';
import {
  m,
  normalizedParquet,
  seedDistributor,
  seedRightsholder,
  seedStatement,
  type FactRow,
} from './helpers.ts';
import { addMember, newOrganization, type Caller } from '../helpers/principals.ts';
import { startTestHandler } from '../helpers/handler.ts';
import { prng } from '../bench/seeded.ts';

// FUZZ_SEED and FUZZ_QUERIES explore further; the suite runs the fixed ones
const SEED = Number(process.env.FUZZ_SEED ?? 20_240_301);
const QUERIES = Number(process.env.FUZZ_QUERIES ?? 600);

let random = prng(SEED);
const int = (n: number) => Math.floor(random() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
const chance = (p: number) => random() < p;
const some = <T>(xs: readonly T[], min: number, max: number): T[] => {
  const n = min + int(max - min + 1);
  return Array.from({ length: n }, () => pick(xs));
};

// --- the dataset -----------------------------------------------------------------------------

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Differential Org');
const org = owner.organizationId;

const rhNames = ['Artist One', 'artist two', 'Zed'];
const rhs = [] as string[];
for (const name of rhNames) rhs.push(await seedRightsholder(srv, org, name));
const d1 = await seedDistributor(srv, org, 'Own Distribution');
const d2 = await seedDistributor(srv, null, `Library ${org.slice(0, 8)}`);
const distributorName = new Map([
  [d1, 'Own Distribution'],
  [d2, `Library ${org.slice(0, 8)}`],
]);

interface StatementSpec {
  rh: number;
  distributor: string | null;
  fileName: string;
  customName: string | null;
  stmt: { year: number; period: number; cadence: 'M' | 'Q' | 'H' | 'Y' } | null;
  currency: string;
  fx: Record<string, string>;
  rows: number;
}
const statementSpecs: StatementSpec[] = [
  {
    rh: 0,
    distributor: d1,
    fileName: 'march-2024.csv',
    customName: 'March',
    stmt: { year: 2024, period: 3, cadence: 'M' },
    currency: 'EUR',
    fx: { EUR: '1.1', USD: '1' },
    rows: 9,
  },
  {
    rh: 0,
    distributor: d2,
    fileName: 'q4-2023.csv',
    customName: null,
    stmt: { year: 2023, period: 4, cadence: 'Q' },
    currency: 'USD',
    fx: { USD: '1' },
    rows: 7,
  },
  {
    rh: 1,
    distributor: d1,
    fileName: 'jan-2024.csv',
    customName: '',
    stmt: { year: 2024, period: 1, cadence: 'M' },
    currency: 'GBP',
    fx: {},
    rows: 5,
  },
  {
    rh: 1,
    distributor: null,
    fileName: 'h2-2022.csv',
    customName: 'Half',
    stmt: { year: 2022, period: 2, cadence: 'H' },
    currency: 'EUR',
    fx: { EUR: '1.087654321', JPY: '0.0067' },
    rows: 8,
  },
  {
    rh: 0,
    distributor: d1,
    fileName: 'undated.csv',
    customName: null,
    stmt: null,
    currency: 'USD',
    fx: { USD: '1', EUR: '1.2' },
    rows: 6,
  },
  {
    rh: 1,
    distributor: d2,
    fileName: 'year-2024.csv',
    customName: 'Year',
    stmt: { year: 2024, period: 1, cadence: 'Y' },
    currency: 'JPY',
    fx: { JPY: '0.0067' },
    rows: 6,
  },
  {
    rh: 0,
    distributor: d1,
    fileName: 'july-2021.csv',
    customName: 'July',
    stmt: { year: 2021, period: 7, cadence: 'M' },
    currency: 'EUR',
    fx: { EUR: '1.18' },
    rows: 5,
  },
  {
    rh: 2,
    distributor: d2,
    fileName: 'march-2024.csv',
    customName: null,
    stmt: { year: 2024, period: 3, cadence: 'M' },
    currency: 'USD',
    fx: { USD: '1' },
    rows: 4,
  },
];

const POOLS = {
  raw_title: ['Alpha', 'alpha', 'Beta 100%', 'gamma_x', 'Delta\\Path', "O'Neil", '', null, 'Zulu'],
  payor: ['Spotify AB', 'spotify ab ltd', '', null, 'Apple'],
  country: ['US', 'DE', 'GB', 'FR', null],
  country_raw: ['United States', 'germany', 'Germany', null, ''],
  royalty_earnings: [
    '10.5',
    '2.25',
    '-1.00',
    '0.000000000001',
    '100',
    '50',
    '7',
    null,
    '0',
    '99999.999999999999',
    '-0.5',
  ],
  gross_royalty_earnings: ['12', '3.333333333333', null, '0', '-2'],
  units: ['100', '10', '0', '1', null, '3.5', '7'],
  royalty_rate: ['0.5', '0.25', null, '1'],
  sales_period: [
    '2024-03-01',
    '2024-03-15',
    '2024-02-29',
    '2023-10-01',
    '2023-12-31',
    '2024-01-01',
    '2022-07-04',
    null,
    '2024-12-30',
    '2021-01-03',
  ],
  source: ['Spotify', 'ASCAP', null, 'spotify'],
  sales_type: ['Streaming', 'Download', null],
} as const;

/** A row as the oracle sees the view: the facts row with its statement's reference data. */
interface ViewRow {
  statement_id: string;
  rightsholder_id: string;
  rightsholder_name: string;
  distributor_id: string | null;
  distributor_name: string | null;
  file_name: string;
  custom_name: string | null;
  stmt_year: number | null;
  stmt_period: number | null;
  stmt_cadence: string | null;
  month_index: number | null;
  currency: string;
  rate: string | null;
  f: FactRow;
}

random = prng(SEED ^ 0x5eed);
const statementIds: string[] = [];
function randomFacts(s: StatementSpec): FactRow[] {
  return Array.from({ length: s.rows }, () => {
    const start = pick(POOLS.sales_period);
    return {
      raw_title: pick(POOLS.raw_title),
      payor: pick(POOLS.payor),
      country: pick(POOLS.country),
      country_raw: pick(POOLS.country_raw),
      royalty_earnings: pick(POOLS.royalty_earnings),
      gross_royalty_earnings: pick(POOLS.gross_royalty_earnings),
      units: pick(POOLS.units),
      royalty_rate: pick(POOLS.royalty_rate),
      sales_period_start: start,
      sales_period_end: chance(0.3) ? pick(POOLS.sales_period) : start,
      source: pick(POOLS.source),
      sales_type: pick(POOLS.sales_type),
      currency: chance(0.25) ? pick(['USD', 'EUR', 'JPY', 'GBP']) : s.currency,
    };
  });
}
function viewRows(s: StatementSpec, id: string, facts: FactRow[]): ViewRow[] {
  const last = s.stmt
    ? { M: s.stmt.period, Q: s.stmt.period * 3, H: s.stmt.period * 6, Y: 12 }[s.stmt.cadence]
    : null;
  return facts.map((f) => ({
    statement_id: id,
    rightsholder_id: rhs[s.rh]!,
    rightsholder_name: rhNames[s.rh]!,
    distributor_id: s.distributor,
    distributor_name: s.distributor ? distributorName.get(s.distributor)! : null,
    file_name: s.fileName,
    custom_name: s.customName,
    stmt_year: s.stmt?.year ?? null,
    stmt_period: s.stmt?.period ?? null,
    stmt_cadence: s.stmt?.cadence ?? null,
    month_index: s.stmt && last !== null ? s.stmt.year * 12 + last - 1 : null,
    currency: f.currency as string,
    rate: s.fx[f.currency as string] ?? null,
    f,
  }));
}
const statementFacts = new Map<string, FactRow[]>();
for (const s of statementSpecs) {
  const facts = randomFacts(s);
  const id = await seedStatement(srv, {
    organizationId: org,
    rightsholderId: rhs[s.rh]!,
    distributorId: s.distributor,
    fileName: s.fileName,
    customName: s.customName,
    stmt: s.stmt,
    currency: s.currency,
    fx: s.fx,
    rows: facts,
  });
  statementIds.push(id);
  statementFacts.set(id, facts);
}
/** the rows of the view as the seeded (and later changed) data gives them */
const viewOfData = () =>
  statementSpecs.flatMap((s, i) =>
    statementFacts.has(statementIds[i]!)
      ? viewRows(s, statementIds[i]!, statementFacts.get(statementIds[i]!)!)
      : [],
  );
let rows = viewOfData();

// --- exact decimals ----------------------------------------------------------------------------

/** a decimal as an integer at a scale */
interface Dec {
  v: bigint;
  scale: number;
}
function dec(text: string): Dec {
  const negative = text.startsWith('-');
  const [int = '0', frac = ''] = text.replace(/^[-+]/, '').split('.');
  const v = BigInt(int + frac);
  return { v: negative ? -v : v, scale: frac.length };
}
const rescale = (a: Dec, scale: number): bigint => a.v * 10n ** BigInt(scale - a.scale);
const add = (a: Dec, b: Dec): Dec => {
  const scale = Math.max(a.scale, b.scale);
  return { v: rescale(a, scale) + rescale(b, scale), scale };
};
const mul = (a: Dec, b: Dec): Dec => ({ v: a.v * b.v, scale: a.scale + b.scale });
const cmpDec = (a: Dec, b: Dec): number => {
  const scale = Math.max(a.scale, b.scale);
  const [x, y] = [rescale(a, scale), rescale(b, scale)];
  return x < y ? -1 : x > y ? 1 : 0;
};
function decText(a: Dec): string {
  const negative = a.v < 0n;
  const digits = (negative ? -a.v : a.v).toString().padStart(a.scale + 1, '0');
  const text = a.scale === 0 ? digits : `${digits.slice(0, -a.scale)}.${digits.slice(-a.scale)}`;
  return decimalText(`${negative ? '-' : ''}${text}`);
}

// --- the members the oracle knows ------------------------------------------------------------------

type Kind = 'string' | 'number' | 'time';
interface OracleDimension {
  kind: Kind;
  /** string and time (YYYY-MM-DD) dimensions: the text; numbers: decimal text */
  value: (r: ViewRow) => string | null;
  /** values a filter may compare with */
  pool: (string | number | null)[];
  /** whether the stored rollup can answer it */
  rollup: boolean;
}

// A caller sees the rows of some rightsholders (data access); tm reads the latest statement month
// of each distributor among those rows.
interface View {
  caller: Caller;
  rows: ViewRow[];
  latestMonth: Map<string | null, number>;
}
function viewOf(caller: Caller, visible: ViewRow[]): View {
  const latestMonth = new Map<string | null, number>();
  for (const r of visible) {
    if (r.month_index !== null && r.month_index > (latestMonth.get(r.distributor_id) ?? -Infinity))
      latestMonth.set(r.distributor_id, r.month_index);
  }
  return { caller, rows: visible, latestMonth };
}
const restricted = await addMember(srv, org, 'member');
await srv.deps.pool.query(
  `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
  [org, restricted.userId, [rhs[1], rhs[2]]],
);
const viewsOf = () => [
  viewOf(owner, rows),
  viewOf(
    restricted,
    rows.filter((r) => r.rightsholder_id !== rhs[0]),
  ),
];
let views = viewsOf();
/** the view the oracle is answering for */
let view = views[0]!;
function tm(r: ViewRow): string | null {
  const latest = view.latestMonth.get(r.distributor_id) ?? null;
  if (latest === null || r.month_index === null) return null;
  const k = latest - r.month_index;
  if (k <= 0) return '00.TM';
  if (k <= 12) return '01.LTM';
  if (k <= 24) return '02.PTM';
  return `${String(Math.floor((k + 11) / 12)).padStart(2, '0')}.TM`;
}
const s = (v: unknown) => (v === null || v === undefined ? null : String(v));
const num = (v: unknown) => (v === null || v === undefined ? null : decText(dec(String(v))));
const strPool = (...xs: (string | null)[]) => xs;

const DIMENSIONS: Record<string, OracleDimension> = {
  currency: {
    kind: 'string',
    value: (r) => r.currency,
    pool: strPool('EUR', 'USD', 'GBP', 'JPY', 'eur', 'X', null),
    rollup: true,
  },
  territory: {
    kind: 'string',
    value: (r) => s(r.f.country),
    pool: strPool('US', 'DE', 'GB', 'FR', 'us', '', null),
    rollup: true,
  },
  territory_raw: {
    kind: 'string',
    value: (r) => s(r.f.country_raw),
    pool: strPool('United States', 'germany', 'Germany', '', 'u', null),
    rollup: false,
  },
  payor: {
    kind: 'string',
    value: (r) => s(r.f.payor),
    pool: strPool('Spotify AB', 'spotify ab ltd', '', 'Apple', 'spotify', null),
    rollup: false,
  },
  track_title_raw: {
    kind: 'string',
    value: (r) => s(r.f.raw_title),
    pool: strPool(
      'Alpha',
      'alpha',
      'Beta 100%',
      'gamma_x',
      'Delta\\Path',
      "O'Neil",
      '',
      'Zulu',
      null,
    ),
    rollup: false,
  },
  rightsholder_id: {
    kind: 'string',
    value: (r) => r.rightsholder_id,
    pool: [...rhs, null],
    rollup: true,
  },
  rightsholder_name: {
    kind: 'string',
    value: (r) => r.rightsholder_name,
    pool: [...rhNames, 'artist', null],
    rollup: true,
  },
  statement_id: {
    kind: 'string',
    value: (r) => r.statement_id,
    pool: [...statementIds, null],
    rollup: true,
  },
  distributor_id: {
    kind: 'string',
    value: (r) => r.distributor_id,
    pool: [d1, d2, null],
    rollup: true,
  },
  distributor_name: {
    kind: 'string',
    value: (r) => r.distributor_name,
    pool: [...distributorName.values(), 'Own', null],
    rollup: true,
  },
  file_name: {
    kind: 'string',
    value: (r) => r.file_name,
    pool: strPool('march-2024.csv', 'undated.csv', 'q4-2023.csv', 'x.csv', null),
    rollup: true,
  },
  custom_name: {
    kind: 'string',
    value: (r) => r.custom_name,
    pool: strPool('March', 'Half', 'Year', '', 'July', null),
    rollup: true,
  },
  stmt_cadence: {
    kind: 'string',
    value: (r) => r.stmt_cadence,
    pool: strPool('M', 'Q', 'H', 'Y', 'm', null),
    rollup: true,
  },
  stmt_period_full: {
    kind: 'string',
    value: (r) =>
      r.stmt_year === null || r.stmt_period === null || r.stmt_cadence === null
        ? null
        : `${r.stmt_year}${r.stmt_cadence}${String(r.stmt_period).padStart(2, '0')}`,
    pool: strPool('2024M03', '2023Q04', '2022H02', '2024Y01', '2021M07', '2024M', null),
    rollup: true,
  },
  stmt_period_month: {
    kind: 'string',
    value: (r) =>
      r.month_index === null
        ? null
        : `${Math.floor(r.month_index / 12)}M${String((r.month_index % 12) + 1).padStart(2, '0')}`,
    pool: strPool('2024M03', '2023M12', '2024M12', '2022M12', '2021M07', null),
    rollup: true,
  },
  sales_type_raw: {
    kind: 'string',
    value: (r) => s(r.f.sales_type),
    pool: strPool('Streaming', 'Download', 'streaming', null),
    rollup: true,
  },
  source_raw: {
    kind: 'string',
    value: (r) => s(r.f.source),
    pool: strPool('Spotify', 'ASCAP', 'spotify', null),
    rollup: true,
  },
  tm: {
    kind: 'string',
    value: tm,
    pool: strPool('00.TM', '01.LTM', '02.PTM', '03.TM', '04.TM', '1.LTM', null),
    rollup: true,
  },
  stmt_year: {
    kind: 'number',
    value: (r) => num(r.stmt_year),
    pool: [2024, '2023', 2022, '2024.0', 2021, null],
    rollup: true,
  },
  stmt_period: {
    kind: 'number',
    value: (r) => num(r.stmt_period),
    pool: [1, 2, 3, '4', 12, null],
    rollup: true,
  },
  royalty_rate: {
    kind: 'number',
    value: (r) => num(r.f.royalty_rate),
    pool: ['0.5', 0.25, '1', '0', null],
    rollup: false,
  },
  fx_rate: {
    kind: 'number',
    value: (r) => num(r.rate),
    pool: ['1.1', 1, '1.087654321', '0.0067', '1.2', null],
    rollup: true,
  },
  sales_period_start: {
    kind: 'time',
    value: (r) => s(r.f.sales_period_start),
    pool: [],
    rollup: true,
  },
  sales_period_end: { kind: 'time', value: (r) => s(r.f.sales_period_end), pool: [], rollup: true },
};
// members only compared with and without usePreagg (they read the lookups, empty here)
const OTHER_DIMENSIONS = [
  'source',
  'primary_sales_type',
  'primary_rights_type',
  'earnings_category',
];

const DATE_VALUES = [
  '2024-03-01',
  '2024-02-29',
  '2024-03-15',
  '2023-12-31',
  '2024-01-01',
  '2023-10-01',
  '2022-07-04',
  '2024-12-30',
  '2021-01-03',
  '2024-03-01T06:00:00',
  '2024-02-29T23:59:59.999',
  '2023-12-31T00:00:00.000',
  '2024-01-01T00:00:00.001',
  '2020-01-01',
  '2030-12-31',
];

type Sum = 'royalty_earnings' | 'gross_royalty_earnings' | 'units';
interface OracleMeasure {
  /** the value of a group: decimal, or null */
  value: (group: ViewRow[]) => Dec | null;
  rollup: boolean;
}
function sumOf(group: ViewRow[], value: (r: ViewRow) => Dec | null): Dec | null {
  let total: Dec | null = null;
  for (const r of group) {
    const v = value(r);
    if (v !== null) total = total === null ? v : add(total, v);
  }
  return total;
}
const column = (c: Sum) => (r: ViewRow) =>
  r.f[c] === null || r.f[c] === undefined ? null : dec(String(r.f[c]));
const usd = (c: Sum) => (r: ViewRow) => {
  const v = column(c)(r);
  return v === null || r.rate === null ? null : mul(v, dec(r.rate));
};
/** a converted sum as answered: rounded once to 10 decimals, half to even (docs/money.md) */
function usd10(a: Dec | null): Dec | null {
  if (a === null || a.scale <= 10) return a;
  const unit = 10n ** BigInt(a.scale - 10);
  const magnitude = a.v < 0n ? -a.v : a.v;
  const [q, twice] = [magnitude / unit, (magnitude % unit) * 2n];
  const r = twice > unit || (twice === unit && q % 2n === 1n) ? q + 1n : q;
  return { v: a.v < 0n ? -r : r, scale: 10 };
}
const MEASURES: Record<string, OracleMeasure> = {
  units: { value: (g) => sumOf(g, column('units')), rollup: true },
  royalty_earnings: { value: (g) => sumOf(g, column('royalty_earnings')), rollup: true },
  gross_royalty_earnings: {
    value: (g) => sumOf(g, column('gross_royalty_earnings')),
    rollup: true,
  },
  royalty_earnings_usd: { value: (g) => usd10(sumOf(g, usd('royalty_earnings'))), rollup: true },
  gross_royalty_earnings_usd: {
    value: (g) => usd10(sumOf(g, usd('gross_royalty_earnings'))),
    rollup: true,
  },
  statement_row_count: { value: (g) => ({ v: BigInt(g.length), scale: 0 }), rollup: true },
  statement_count: {
    value: (g) => ({ v: BigInt(new Set(g.map((r) => r.statement_id)).size), scale: 0 }),
    rollup: true,
  },
};
// values a measure filter compares with: a few constants, and the values of the measures over
// groups of the dataset, so that equals and the boundaries of gt/gte/lt/lte meet real answers
const MEASURE_VALUES: (string | number)[] = ['0', 1, '7', '10.5', '100', '-1', '1000.5', 2, '1e2'];
const MEASURE_ANSWERS = new Map<string, string[]>(Object.keys(MEASURES).map((name) => [name, []]));
for (const by of [
  (r: ViewRow) => r.statement_id,
  (r: ViewRow) => r.currency,
  (r: ViewRow) => `${r.statement_id}|${String(r.f.country)}`,
]) {
  const groups = new Map<string, ViewRow[]>();
  for (const r of rows) groups.set(by(r), [...(groups.get(by(r)) ?? []), r]);
  for (const g of groups.values()) {
    for (const [name, measure] of Object.entries(MEASURES)) {
      const v = measure.value(g);
      if (v !== null) MEASURE_ANSWERS.get(name)!.push(decText(v));
    }
  }
}

// --- dates ---------------------------------------------------------------------------------------

const GRANULARITIES = ['day', 'week', 'month', 'quarter', 'year'] as const;
type Granularity = (typeof GRANULARITIES)[number];
const DAY = 86_400_000;
const ms = (date: string) => Date.parse(`${date}T00:00:00.000Z`);
const iso = (t: number) => new Date(t).toISOString().slice(0, 10);
function bucket(date: string, g: Granularity): string {
  const [y, mo] = date.split('-').map(Number) as [number, number];
  const day =
    g === 'day'
      ? date
      : g === 'week'
        ? iso(ms(date) - ((new Date(ms(date)).getUTCDay() + 6) % 7) * DAY)
        : g === 'month'
          ? `${date.slice(0, 7)}-01`
          : g === 'quarter'
            ? `${y}-${String(Math.floor((mo - 1) / 3) * 3 + 1).padStart(2, '0')}-01`
            : `${y}-01-01`;
  return `${day}T00:00:00.000`;
}
/** a bound as milliseconds: a bare date is its midnight, or (end) its last millisecond */
function boundMs(v: string, side: 'start' | 'end'): number {
  if (/^\d{4}-\d{2}-\d{2}$/.test(v)) return ms(v) + (side === 'end' ? DAY - 1 : 0);
  return Date.parse(`${v}Z`);
}

// --- queries -------------------------------------------------------------------------------------

type Filter =
  | { member: string; operator: string; values?: (string | number | null)[] }
  | { and: Filter[] }
  | { or: Filter[] };
interface TimeDimension {
  dimension: string;
  granularity?: Granularity;
  dateRange?: string[];
}
interface Query {
  measures?: string[];
  dimensions?: string[];
  timeDimensions?: TimeDimension[];
  filters: Filter[];
  order?: Record<string, 'asc' | 'desc'>;
  limit?: number;
  offset?: number;
  total?: boolean;
}

const oracleDimensions = Object.keys(DIMENSIONS);
const plainDimensions = oracleDimensions.filter((d) => DIMENSIONS[d]!.kind !== 'time');
const timeMembers = oracleDimensions.filter((d) => DIMENSIONS[d]!.kind === 'time');

function dimensionLeaf(): Filter {
  const name = pick(oracleDimensions);
  const d = DIMENSIONS[name]!;
  const member = m(name);
  if (d.kind === 'time') {
    const op = pick([
      'equals',
      'notEquals',
      'gt',
      'gte',
      'lt',
      'lte',
      'set',
      'notSet',
      'inDateRange',
      'notInDateRange',
      'beforeDate',
      'afterDate',
      'inDateRange',
      'beforeOrOnDate',
      'afterOrOnDate',
    ]);
    if (op === 'set' || op === 'notSet') return { member, operator: op };
    if (op === 'inDateRange' || op === 'notInDateRange') {
      const range = chance(0.3)
        ? [pick(DATE_VALUES.filter((v) => v.length === 10))]
        : [pick(DATE_VALUES), pick(DATE_VALUES)];
      return { member, operator: op, values: range };
    }
    if (['beforeDate', 'afterDate', 'beforeOrOnDate', 'afterOrOnDate'].includes(op))
      return { member, operator: op, values: [pick(DATE_VALUES)] };
    if (op === 'equals' || op === 'notEquals')
      return { member, operator: op, values: some([...DATE_VALUES, null], 1, 3) };
    return { member, operator: op, values: some(DATE_VALUES, 1, 2) };
  }
  const like = [
    'contains',
    'notContains',
    'startsWith',
    'notStartsWith',
    'endsWith',
    'notEndsWith',
  ];
  const ops =
    d.kind === 'string'
      ? ['equals', 'notEquals', ...like, 'gt', 'gte', 'lt', 'lte', 'set', 'notSet']
      : ['equals', 'notEquals', 'gt', 'gte', 'lt', 'lte', 'set', 'notSet'];
  const op = pick(ops);
  if (op === 'set' || op === 'notSet') return { member, operator: op };
  if (like.includes(op)) {
    const needles = [
      'a',
      'AL',
      '%',
      '_',
      '\\',
      '100%',
      'ab l',
      '',
      "'",
      'x',
      'spot',
      'M0',
      '.TM',
      null,
    ];
    return { member, operator: op, values: some(needles, 1, 3) };
  }
  if (op === 'equals' || op === 'notEquals')
    return { member, operator: op, values: some(d.pool, 1, 3) };
  return {
    member,
    operator: op,
    values: some(
      d.pool.filter((v) => v !== null),
      1,
      2,
    ),
  };
}

function measureLeaf(): Filter {
  const name = pick(Object.keys(MEASURES));
  const member = m(name);
  const op = pick(['equals', 'notEquals', 'gt', 'gte', 'lt', 'lte', 'set', 'notSet', 'gt', 'lt']);
  if (op === 'set' || op === 'notSet') return { member, operator: op };
  const values = chance(0.5) ? MEASURE_ANSWERS.get(name)! : MEASURE_VALUES;
  if (op === 'equals' || op === 'notEquals')
    return { member, operator: op, values: some([...values, null], 1, 2) };
  return { member, operator: op, values: some(values, 1, 2) };
}

function filterNode(depth: number, measure: boolean): Filter {
  if (depth < 3 && chance(0.3)) {
    const children = Array.from({ length: 1 + int(3) }, () => filterNode(depth + 1, measure));
    return chance(0.5) ? { and: children } : { or: children };
  }
  return measure ? measureLeaf() : dimensionLeaf();
}

function rightsholderFilter(): Filter {
  const member = m('rightsholder_id');
  return pick([
    { member, operator: 'equals', values: rhs },
    { member, operator: 'equals', values: [rhs[0]!, rhs[1]!] },
    { member, operator: 'equals', values: [pick(rhs)] },
    // notEquals names no rightsholder: only beside a filter that does (RIGHTSHOLDER_FILTER_REQUIRED)
    {
      and: [
        { member, operator: 'equals', values: rhs },
        { member, operator: 'notEquals', values: [pick(rhs)] },
      ],
    },
    { and: [{ member, operator: 'equals', values: rhs }] },
  ]);
}

function randomQuery(): Query {
  const q: Query = { filters: [rightsholderFilter()] };
  const withOthers = chance(0.1);
  const measures = some(Object.keys(MEASURES), 0, 3).map(m);
  const dimensions = some(plainDimensions, 0, chance(0.3) ? 3 : 2).map(m);
  if (withOthers) dimensions.push(m(pick(OTHER_DIMENSIONS)));
  if (chance(0.15)) dimensions.push(m(pick(timeMembers)));
  if (chance(0.15)) dimensions.push(`${m(pick(timeMembers))}.${pick(GRANULARITIES)}`);
  const timeDimensions: TimeDimension[] = [];
  for (let i = int(3); i > 0; i--) {
    const td: TimeDimension = { dimension: m(pick(timeMembers)) };
    if (chance(0.7)) td.granularity = pick(GRANULARITIES);
    if (chance(0.4))
      td.dateRange = chance(0.3)
        ? [pick(DATE_VALUES.filter((v) => v.length === 10))]
        : [pick(DATE_VALUES), pick(DATE_VALUES)];
    timeDimensions.push(td);
  }
  if (measures.length) q.measures = measures;
  if (dimensions.length) q.dimensions = dimensions;
  if (timeDimensions.length) q.timeDimensions = timeDimensions;
  if (!measures.length && !dimensions.length && !timeDimensions.some((td) => td.granularity))
    q.measures = [m(pick(Object.keys(MEASURES)))];
  for (let i = int(4); i > 0; i--) q.filters.push(filterNode(1, chance(0.3)));
  if (chance(0.4)) {
    const selected = [
      ...(q.measures ?? []),
      ...(q.dimensions ?? []),
      ...timeDimensions.flatMap((td) =>
        td.granularity ? [`${td.dimension}.${td.granularity}`, td.dimension] : [],
      ),
    ];
    const candidates = [
      ...selected,
      ...selected,
      m(pick(Object.keys(MEASURES))),
      m(pick(plainDimensions)),
    ];
    q.order = {};
    for (let i = int(4); i > 0; i--) q.order[pick(candidates)] = chance(0.5) ? 'asc' : 'desc';
  }
  if (chance(0.3)) q.limit = int(7);
  if (chance(0.2)) q.offset = int(5);
  if (chance(0.3)) q.total = true;
  return q;
}

// --- the oracle ----------------------------------------------------------------------------------

const nameOf = (member: string) => member.slice(m('').length);
const isMeasure = (member: string) => nameOf(member) in MEASURES;

/** a filter leaf on a dimension, for one row (Cube's NULL rules; NULL comparisons are false) */
function dimensionTest(
  f: { member: string; operator: string; values?: (string | number | null)[] },
  r: ViewRow,
): boolean {
  const d = DIMENSIONS[nameOf(f.member)]!;
  const v = d.value(r);
  const values = (f.values ?? []).map((x) => (x === null ? null : String(x)));
  const nonNull = values.filter((x): x is string => x !== null);
  const hasNull = values.includes(null);
  const cmp = (x: string): number => {
    if (d.kind === 'number') return Math.sign(Number(v) - Number(x));
    if (d.kind === 'time') return Math.sign(ms(v!) - boundMs(x, 'start'));
    return v! < x ? -1 : v! > x ? 1 : 0;
  };
  switch (f.operator) {
    case 'equals':
      return v === null ? hasNull : nonNull.some((x) => cmp(x) === 0);
    case 'notEquals':
      if (nonNull.length === 0) return v !== null;
      return v === null ? !hasNull : nonNull.every((x) => cmp(x) !== 0);
    case 'contains':
      return v === null ? hasNull : nonNull.some((x) => v.toLowerCase().includes(x.toLowerCase()));
    case 'notContains':
      if (nonNull.length === 0) return v !== null;
      return v === null
        ? !hasNull
        : nonNull.every((x) => !v.toLowerCase().includes(x.toLowerCase()));
    case 'startsWith':
      return v === null
        ? hasNull
        : nonNull.some((x) => v.toLowerCase().startsWith(x.toLowerCase()));
    case 'notStartsWith':
      if (nonNull.length === 0) return v !== null;
      return v === null
        ? !hasNull
        : nonNull.every((x) => !v.toLowerCase().startsWith(x.toLowerCase()));
    case 'endsWith':
      return v === null ? hasNull : nonNull.some((x) => v.toLowerCase().endsWith(x.toLowerCase()));
    case 'notEndsWith':
      if (nonNull.length === 0) return v !== null;
      return v === null
        ? !hasNull
        : nonNull.every((x) => !v.toLowerCase().endsWith(x.toLowerCase()));
    case 'gt':
      return v !== null && cmp(nonNull[0]!) > 0;
    case 'gte':
      return v !== null && cmp(nonNull[0]!) >= 0;
    case 'lt':
      return v !== null && cmp(nonNull[0]!) < 0;
    case 'lte':
      return v !== null && cmp(nonNull[0]!) <= 0;
    case 'set':
      return v !== null;
    case 'notSet':
      return v === null;
    case 'inDateRange':
    case 'notInDateRange': {
      if (v === null) return false;
      const [from, to] =
        nonNull.length === 1
          ? [nonNull[0]!.slice(0, 10), nonNull[0]!.slice(0, 10)]
          : [nonNull[0]!, nonNull[1]!];
      const inside = ms(v) >= boundMs(from, 'start') && ms(v) <= boundMs(to, 'end');
      const outside = ms(v) < boundMs(from, 'start') || ms(v) > boundMs(to, 'end');
      return f.operator === 'inDateRange' ? inside : outside;
    }
    case 'beforeDate':
      return v !== null && ms(v) < boundMs(nonNull[0]!, 'start');
    case 'afterDate':
      return v !== null && ms(v) > boundMs(nonNull[0]!, 'start');
    case 'beforeOrOnDate':
      return v !== null && ms(v) <= boundMs(nonNull[0]!, 'start');
    case 'afterOrOnDate':
      return v !== null && ms(v) >= boundMs(nonNull[0]!, 'start');
  }
  throw new Error(`operator ${f.operator}`);
}

function measureTest(
  f: { member: string; operator: string; values?: (string | number | null)[] },
  group: ViewRow[],
): boolean {
  const value = MEASURES[nameOf(f.member)]!.value(group);
  const v = value === null ? null : Number(decText(value));
  const values = (f.values ?? []).map((x) => (x === null ? null : String(x)));
  const nonNull = values.filter((x): x is string => x !== null).map(Number);
  const hasNull = values.includes(null);
  switch (f.operator) {
    case 'equals':
      return v === null ? hasNull : nonNull.includes(v);
    case 'notEquals':
      if (nonNull.length === 0) return v !== null;
      return v === null ? !hasNull : !nonNull.includes(v);
    case 'gt':
      return v !== null && v > nonNull[0]!;
    case 'gte':
      return v !== null && v >= nonNull[0]!;
    case 'lt':
      return v !== null && v < nonNull[0]!;
    case 'lte':
      return v !== null && v <= nonNull[0]!;
    case 'set':
      return v !== null;
    case 'notSet':
      return v === null;
  }
  throw new Error(`operator ${f.operator}`);
}

function test<T>(
  f: Filter,
  subject: T,
  leaf: (
    f: { member: string; operator: string; values?: (string | number | null)[] },
    s: T,
  ) => boolean,
): boolean {
  if ('and' in f) return f.and.every((c) => test(c, subject, leaf));
  if ('or' in f) return f.or.some((c) => test(c, subject, leaf));
  return leaf(f, subject);
}
const leaves = (f: Filter): { member: string }[] =>
  'and' in f ? f.and.flatMap(leaves) : 'or' in f ? f.or.flatMap(leaves) : [f];
const isMeasureFilter = (f: Filter) => isMeasure(leaves(f)[0]!.member);

/** whether the oracle knows every member the query reads */
function oracleKnows(q: Query): boolean {
  const members = [
    ...(q.measures ?? []),
    ...(q.dimensions ?? []).map((d) =>
      d.split('.').length === 3 ? d.slice(0, d.lastIndexOf('.')) : d,
    ),
    ...(q.timeDimensions ?? []).map((td) => td.dimension),
    ...q.filters.flatMap(leaves).map((l) => l.member),
  ];
  return members.every((x) => nameOf(x) in MEASURES || nameOf(x) in DIMENSIONS);
}

interface Column {
  keys: string[];
  member: string;
  role: 'dimension' | 'timeDimension' | 'measure';
  granularity?: Granularity;
  /** the text of the column for a group's first row */
  text: (group: ViewRow[]) => string | null;
  /** an order on the column's values */
  compare: (a: ViewRow[], b: ViewRow[]) => number;
}

const dedupe = <T>(xs: T[]) => [...new Set(xs)];

/** The answer Cube's rules give: data rows, and the total when asked. */
function oracle(q: Query): { data: Record<string, string | null>[]; total?: number } {
  const columns: Column[] = [];
  const nullsLast = (a: string | null, b: string | null, c: (x: string, y: string) => number) =>
    a === null ? (b === null ? 0 : 1) : b === null ? -1 : c(a, b);
  const byText = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  const granular: TimeDimension[] = [];
  const plain: string[] = [];
  for (const d of q.dimensions ?? []) {
    const parts = d.split('.');
    if (parts.length === 3)
      granular.push({ dimension: `${parts[0]}.${parts[1]}`, granularity: parts[2] as Granularity });
    else plain.push(d);
  }
  for (const d of dedupe(plain)) {
    const def = DIMENSIONS[nameOf(d)]!;
    const text = (g: ViewRow[]) => {
      const v = def.value(g[0]!);
      return v === null ? null : def.kind === 'time' ? `${v}T00:00:00.000` : v;
    };
    const compare =
      def.kind === 'number' ? (x: string, y: string) => cmpDec(dec(x), dec(y)) : byText;
    columns.push({
      keys: [d],
      member: d,
      role: 'dimension',
      text,
      compare: (a, b) => nullsLast(text(a), text(b), compare),
    });
  }
  const tds = [...(q.timeDimensions ?? []), ...granular];
  const seen = new Set<string>();
  for (const td of tds) {
    if (!td.granularity) continue;
    const key = `${td.dimension}.${td.granularity}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const def = DIMENSIONS[nameOf(td.dimension)]!;
    const g = td.granularity;
    const text = (group: ViewRow[]) => {
      const v = def.value(group[0]!);
      return v === null ? null : bucket(v, g);
    };
    columns.push({
      keys: [key],
      member: td.dimension,
      role: 'timeDimension',
      granularity: g,
      text,
      compare: (a, b) => nullsLast(text(a), text(b), byText),
    });
  }
  for (const member of dedupe(
    columns.filter((c) => c.role === 'timeDimension').map((c) => c.member),
  )) {
    if (plain.includes(member)) continue;
    const finest = columns
      .filter((c) => c.role === 'timeDimension' && c.member === member)
      .sort(
        (a, b) => GRANULARITIES.indexOf(a.granularity!) - GRANULARITIES.indexOf(b.granularity!),
      )[0]!;
    finest.keys.push(member);
  }
  for (const x of dedupe(q.measures ?? [])) {
    const def = MEASURES[nameOf(x)]!;
    const text = (g: ViewRow[]) => {
      const v = def.value(g);
      return v === null ? null : decText(v);
    };
    columns.push({
      keys: [x],
      member: x,
      role: 'measure',
      text,
      compare: (a, b) => nullsLast(text(a), text(b), (x, y) => cmpDec(dec(x), dec(y))),
    });
  }

  const grouping = columns.filter((c) => c.role !== 'measure');
  const where = q.filters.filter((f) => !isMeasureFilter(f));
  const having = q.filters.filter(isMeasureFilter);
  const kept = view.rows.filter(
    (r) =>
      where.every((f) => test(f, r, dimensionTest)) &&
      tds.every((td) => {
        if (!td.dateRange) return true;
        const v = DIMENSIONS[nameOf(td.dimension)]!.value(r);
        const [from, to] =
          td.dateRange.length === 1 ? [td.dateRange[0]!, td.dateRange[0]!] : td.dateRange;
        return v !== null && ms(v) >= boundMs(from!, 'start') && ms(v) <= boundMs(to!, 'end');
      }),
  );
  let groups: ViewRow[][];
  if (grouping.length === 0) groups = [kept];
  else {
    const byKey = new Map<string, ViewRow[]>();
    for (const r of kept) {
      const key = JSON.stringify(grouping.map((c) => c.text([r])));
      byKey.set(key, [...(byKey.get(key) ?? []), r]);
    }
    groups = [...byKey.values()];
  }
  groups = groups.filter((g) => having.every((f) => test(f, g, measureTest)));

  const items: { column: Column; desc: boolean }[] = [];
  if (q.order) {
    for (const [id, dir] of Object.entries(q.order)) {
      const c = columns.find((c) => c.keys.includes(id));
      if (c && !items.some((i) => i.column === c)) items.push({ column: c, desc: dir === 'desc' });
    }
  } else {
    const granularColumn = columns.find((c) => c.role === 'timeDimension');
    const measure = columns.find((c) => c.role === 'measure');
    if (granularColumn) items.push({ column: granularColumn, desc: false });
    else if (measure && grouping.length > 0) items.push({ column: measure, desc: true });
    else if (grouping[0]) items.push({ column: grouping[0], desc: false });
  }
  for (const c of grouping)
    if (!items.some((i) => i.column === c)) items.push({ column: c, desc: false });
  const sorted = [...groups].sort((a, b) => {
    for (const { column, desc } of items) {
      const [x, y] = [column.text(a), column.text(b)];
      // NULL last in either direction (DuckDB's default order of NULLs)
      if (x === null || y === null) {
        if (x !== y) return x === null ? 1 : -1;
        continue;
      }
      const c = column.compare(a, b);
      if (c !== 0) return desc ? -c : c;
    }
    return 0;
  });
  const offset = q.offset ?? 0;
  const data = sorted.slice(offset, offset + (q.limit ?? 10_000)).map((g) => {
    const row: Record<string, string | null> = {};
    // Cube's key order: each column's own key, then the plain keys of granular time dimensions
    for (const c of columns) row[c.keys[0]!] = c.text(g);
    for (const c of columns) for (const k of c.keys.slice(1)) row[k] = c.text(g);
    return row;
  });
  return q.total ? { data, total: groups.length } : { data };
}

// --- running and comparing -----------------------------------------------------------------------

// the rows' keys in their order: the answer's order of keys is Cube's (dimensions, granular time
// dimensions, measures, then the plain time keys)
const canonical = (answer: { data: Record<string, unknown>[]; total?: number }) =>
  JSON.stringify({ data: answer.data, total: answer.total });

async function run(query: Query, usePreagg: boolean): Promise<string> {
  const res = await view.caller.client.mutate('cube.query', {
    organizationId: org,
    query,
    usePreagg,
  });
  if (!res.ok)
    return `ERROR ${JSON.stringify(res.error.data?.errorCode ?? null)}: ${res.error.message}`;
  return canonical(res.data);
}

/** what is wrong with a query's answer, or null */
async function problem(q: Query): Promise<string | null> {
  const [rowsAnswer, preagg] = [await run(q, false), await run(q, true)];
  if (rowsAnswer !== preagg)
    return `usePreagg differs:\n  false: ${rowsAnswer}\n  true:  ${preagg}`;
  if (!oracleKnows(q)) return null;
  const expected = canonical(oracle(q));
  return rowsAnswer === expected
    ? null
    : `oracle differs:\n  got:      ${rowsAnswer}\n  expected: ${expected}`;
}

/** Smaller variants of a query: each one drops or simplifies one part. */
function* smaller(q: Query): Generator<Query> {
  const without = <K extends keyof Query>(key: K): Query => {
    const copy = { ...q };
    delete copy[key];
    return copy;
  };
  for (const key of ['order', 'limit', 'total'] as const)
    if (q[key] !== undefined) yield without(key);
  for (const key of ['measures', 'dimensions', 'timeDimensions'] as const) {
    const list = q[key] as unknown[] | undefined;
    if (!list) continue;
    if (list.length > 0) yield without(key);
    for (let i = 0; i < list.length; i++) yield { ...q, [key]: list.filter((_, j) => j !== i) };
  }
  const tds = q.timeDimensions ?? [];
  for (let i = 0; i < tds.length; i++) {
    const { dimension, granularity, dateRange } = tds[i]!;
    const simpler: TimeDimension[] = [];
    if (dateRange) simpler.push({ dimension, ...(granularity ? { granularity } : {}) });
    if (granularity) simpler.push({ dimension, ...(dateRange ? { dateRange } : {}) });
    for (const td of simpler) yield { ...q, timeDimensions: tds.map((x, j) => (j === i ? td : x)) };
  }
  for (let i = 1; i < q.filters.length; i++)
    yield { ...q, filters: q.filters.filter((_, j) => j !== i) };
  for (let i = 0; i < q.filters.length; i++) {
    const f = q.filters[i]!;
    const children = 'and' in f ? f.and : 'or' in f ? f.or : null;
    if (children)
      for (const c of children) yield { ...q, filters: q.filters.map((x, j) => (j === i ? c : x)) };
    if (
      !children &&
      (f as { values?: unknown[] }).values &&
      (f as { values: unknown[] }).values.length > 1
    ) {
      const leaf = f as { member: string; operator: string; values: unknown[] };
      for (let k = 0; k < leaf.values.length; k++) {
        yield {
          ...q,
          filters: q.filters.map((x, j) =>
            j === i ? { ...leaf, values: leaf.values.filter((_, l) => l !== k) } : x,
          ) as Filter[],
        };
      }
    }
  }
  if (
    q.filters[0] &&
    !(
      'member' in q.filters[0] &&
      (q.filters[0] as { operator: string }).operator === 'equals' &&
      (q.filters[0] as { values: unknown[] }).values.length === rhs.length
    )
  ) {
    yield {
      ...q,
      filters: [
        { member: m('rightsholder_id'), operator: 'equals', values: rhs },
        ...q.filters.slice(1),
      ],
    };
  }
}

const valid = (q: Query) =>
  (q.measures?.length ?? 0) > 0 ||
  (q.dimensions?.length ?? 0) > 0 ||
  (q.timeDimensions ?? []).some((td) => td.granularity);

async function shrink(q: Query): Promise<{ query: Query; problem: string }> {
  let current = q;
  let found = (await problem(q))!;
  // a bound on the work: each candidate is two cube.query calls
  let budget = 400;
  for (let improved = true; improved;) {
    improved = false;
    for (const candidate of smaller(current)) {
      if (!valid(candidate)) continue;
      if (budget-- === 0) return { query: current, problem: found };
      const p = await problem(candidate);
      // a smaller query that the API refuses is another failure, not this one
      if (p !== null && p.includes('ERROR') === found.includes('ERROR')) {
        current = candidate;
        found = p;
        improved = true;
        break;
      }
    }
  }
  return { query: current, problem: found };
}

async function fuzz(t: Test, seed: number, count: number): Promise<void> {
  random = prng(seed);
  const failures: string[] = [];
  let checked = 0;
  for (let i = 0; i < count; i++) {
    const q = randomQuery();
    view = views[i % 3 === 2 ? 1 : 0]!;
    const p = await problem(q);
    if (oracleKnows(q)) checked++;
    if (p === null) continue;
    const small = await shrink(q);
    failures.push(
      `query ${i} (${view === views[0] ? 'owner' : 'restricted to RH2, RH3'}): ${JSON.stringify(small.query)}\n${small.problem}`,
    );
    if (failures.length >= 5) break;
  }
  t.same(failures, [], failures.join('\n\n'));
  t.ok(checked > count / 2, `the oracle checked ${checked} queries`);
}

t.test(`${QUERIES} random queries (seed ${SEED}): usePreagg or not, and the oracle, agree`, (t) =>
  fuzz(t, SEED, QUERIES),
);

t.test(
  'after the data changed: a statement deleted, one reprocessed, a rate and names changed',
  async (t) => {
    const db = srv.deps.pool;
    await db.query('UPDATE statements SET deleted_at = now() WHERE id = $1', [statementIds[4]]);
    statementFacts.delete(statementIds[4]!);
    await db.query(
      `UPDATE statement_fx SET rate = '1.25' WHERE statement_id = $1 AND currency = 'EUR'`,
      [statementIds[0]],
    );
    statementSpecs[0]!.fx.EUR = '1.25';
    await db.query('UPDATE rightsholders SET name = $2 WHERE id = $1', [rhs[1], 'Renamed Two']);
    rhNames[1] = 'Renamed Two';
    await db.query('UPDATE distributors SET name = $2 WHERE id = $1', [d1, 'Own Renamed']);
    distributorName.set(d1, 'Own Renamed');
    // reprocessed: other rows at normalized version 2
    const id = statementIds[1]!;
    const spec = statementSpecs[1]!;
    random = prng(SEED ^ 0xbeef);
    const facts = randomFacts(spec);
    const key = `orgs/${org}/statements/${id}/normalized-2.parquet`;
    const parquetRows = facts.map((r, i) => ({
      organization_id: org,
      statement_id: id,
      rightsholder_id: rhs[spec.rh]!,
      source_row: i + 1,
      stmt_year: spec.stmt?.year ?? null,
      stmt_period: spec.stmt?.period ?? null,
      stmt_cadence: spec.stmt?.cadence ?? null,
      ...r,
    }));
    await srv.deps.store.put(key, await normalizedParquet(parquetRows));
    await db.query(
      'UPDATE statements SET normalized_key = $2, normalized_version = 2 WHERE id = $1',
      [id, key],
    );
    statementFacts.set(id, facts);
    rows = viewOfData();
    views = viewsOf();
    await fuzz(t, SEED + 1, QUERIES / 2);
  },
);
