// Exchange-rate and market files that cannot be imported as they are: each is refused as a bad
// file (ReferenceFileError: a clear message, exit code 2, recorded failed, never retried by the
// job), never left to a database error, and nothing of it is written. A currency column twice, a
// EUR column in a euro-based file, two columns of one Treasury tenor, a volume or a price too
// large for its column, and a rate that makes one unit worth a million US dollars or more (which
// analytics, holding US dollars per unit as DECIMAL(20,14), would turn into no rate at all), and a
// day after tomorrow (UTC): a typo like 2204 for 2024 became the latest day of exchangeRates.get
// and of every "latest" market answer, with no way to remove it.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { adminInProcess } from '../helpers/cli.ts';
import { importFxRates } from '../../src/fx/import.ts';
import { parseFxCsv } from '../../src/fx/parse.ts';
import { fxRatesImportTask } from '../../src/jobs/tasks/fx_rates_import.ts';
import { ReferenceFileError } from '../../src/lookups/csv.ts';
import { importMarketData, type MarketImportKind } from '../../src/market/import.ts';
import { startTestHandler } from '../helpers/handler.ts';
import { newOrganization } from '../helpers/principals.ts';
import { addJobUnchecked } from '../helpers/jobs.ts';

const dir = await mkdtemp(path.join(tmpdir(), 'fx-hostile-'));
const srv = await startTestHandler(t, {
  taskList: (deps) => ({ fx_rates_import: fxRatesImportTask(deps) }),
});
const db = srv.deps.pool;

async function file(name: string, text: string): Promise<string> {
  const f = path.join(dir, name);
  await writeFile(f, text);
  return f;
}

const count = async (table: string) =>
  (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;

t.test(
  'exchange-rate files: refused as bad files with what is wrong, nothing written',
  async (t) => {
    const before = await count('fx_rates');
    const cases: [string, string, RegExp][] = [
      ['dup-column.csv', 'Date,USD,JPY,GBP,JPY\n2024-01-02,1.1,160,0.85,161\n', /column JPY twice/],
      ['dup-usd.csv', 'Date,USD,JPY,USD\n2024-01-02,1.1,160,1.2\n', /column USD twice/],
      ['eur-column.csv', 'Date,USD,EUR,JPY\n2024-01-02,1.1,1,160\n', /EUR column/],
      [
        'tiny-plain.csv',
        'date,currency,rate\n2024-01-02,JPY,150\n2024-01-02,KWD,0.000000000001\n',
        /Line 3: KWD "0.000000000001" per US dollar makes one unit worth a million US dollars or more/,
      ],
      [
        'edge-plain.csv',
        'date,currency,rate\n2024-01-02,KWD,0.000001\n',
        /Line 2: KWD "0.000001" per US dollar/,
      ],
      [
        'tiny-ecb.csv',
        'Date,USD,JPY,KWD\n2024-01-02,1.1,160,0.0000011\n',
        /Line 2: KWD "0.0000011" makes one unit worth a million US dollars or more/,
      ],
      [
        'huge-usd-ecb.csv',
        'Date,USD,JPY\n2024-01-02,1000000,160000000\n',
        /Line 2: USD "1000000" makes one euro worth a million US dollars or more/,
      ],
    ];
    for (const [name, text, message] of cases) {
      await t.rejects(
        importFxRates(db, { file: await file(name, text) }),
        { name: 'ReferenceFileError', message },
        name,
      );
    }
    t.equal(await count('fx_rates'), before, 'nothing written');
    const log = (
      await db.query(
        `SELECT status, error FROM reference_imports WHERE kind = 'fx' ORDER BY created_at`,
      )
    ).rows;
    t.same(
      log.map((l) => l.status),
      cases.map(() => 'failed'),
    );
    t.notOk(
      log.some((l) => /ON CONFLICT|out of range|overflow/.test(l.error)),
      'never a database error',
    );

    // the limit is a million US dollars a unit: just below it imports, at its exact rate
    const ok = parseFxCsv('date,currency,rate\n2024-01-02,KWD,0.0000010001\n');
    t.same(ok.rates, [{ date: '2024-01-02', currency: 'KWD', value: '0.0000010001' }]);
    t.same(
      parseFxCsv('Date,USD,KWD\n2024-01-02,1.1,0.0000011001\n').rates.map((r) => r.currency),
      ['USD', 'KWD'],
    );
    t.throws(
      () => parseFxCsv('Date,USD,JPY,CYP,CYP\n2024-01-02,1.1,160,0.5,0.5\n'),
      ReferenceFileError,
      'a withdrawn currency twice too',
    );
  },
);

t.test(
  'the command line and the job treat them as bad files: exit code 2, not retried',
  async (t) => {
    const admin = adminInProcess(srv.config.databaseUrl);
    const dup = await file('cli-dup.csv', 'Date,USD,JPY,JPY\n2024-01-03,1.1,160,161\n');
    const res = await admin('fx', 'import', '--file', dup);
    t.equal(res.code, 2, res.stderr);
    t.match(res.stderr, /column JPY twice/);
    t.notMatch(res.stderr, /ON CONFLICT/);

    await addJobUnchecked(srv.deps.pool, 'fx_rates_import', { file: dup });
    const deadline = Date.now() + 20_000;
    let jobs = -1;
    while (Date.now() < deadline) {
      jobs = (
        await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = 'fx_rates_import'`,
        )
      ).rows[0]!.n;
      if (jobs === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    t.equal(jobs, 0, 'the job completed at its first attempt: nothing waits to be retried');
    const last = (
      await db.query(
        `SELECT status, origin, error FROM reference_imports WHERE kind = 'fx' ORDER BY created_at DESC LIMIT 1`,
      )
    ).rows[0];
    t.same(
      { status: last.status, origin: last.origin },
      { status: 'failed', origin: `file:${dup}` },
    );
    t.match(last.error, /column JPY twice/);
  },
);

t.test('market files: refused as bad files with what is wrong, nothing written', async (t) => {
  const before = { prices: await count('market_prices'), yields: await count('treasury_yields') };
  const cases: [MarketImportKind, string, string, RegExp][] = [
    [
      'treasury',
      'tenor-twice.csv',
      'Date,"1 Mo","3 Mo","1 Month"\n10/08/2024,4.98,4.76,4.99\n',
      /"1 Mo" and "1 Month" are the same tenor, 1M/,
    ],
    [
      'history',
      'volume.csv',
      'symbol,date,open,high,low,close,volume\nABC,2024-01-02,1,1,1,1,9223372036854775808\n',
      /Line 2: volume "9223372036854775808" is not a whole number up to 9223372036854775807/,
    ],
    [
      'history',
      'price.csv',
      `symbol,date,close\nABC,2024-01-02,1${'0'.repeat(140_000)}\n`,
      /Line 2: close "10{49}" is not a decimal of at most 20 digits each side of the point/,
    ],
    [
      'treasury',
      'yield.csv',
      `Date,"1 Mo"\n10/08/2024,4.${'9'.repeat(21)}\n`,
      /Line 2: 1M "4\.9{21}" is not a decimal of at most 20 digits/,
    ],
  ];
  for (const [kind, name, text, message] of cases) {
    await t.rejects(
      importMarketData(db, kind, { file: await file(name, text) }),
      { name: 'ReferenceFileError', message },
      name,
    );
  }
  t.same(
    { prices: await count('market_prices'), yields: await count('treasury_yields') },
    before,
    'nothing written',
  );
  // the largest volume a bigint holds, and 20 digits each side of the point, import exactly
  const okHistory = await file(
    'ok.csv',
    `symbol,date,close,volume\nABC,2024-01-02,${'9'.repeat(20)}.${'1'.repeat(20)},9223372036854775807\n`,
  );
  t.same(await importMarketData(db, 'history', { file: okHistory }), {
    kind: 'history',
    rows: 1,
    symbols: ['ABC'],
    from: '2024-01-02',
    to: '2024-01-02',
  });
  const { rows } = await db.query(
    `SELECT close::text, volume::text FROM market_prices WHERE symbol = 'ABC'`,
  );
  t.same(rows, [{ close: `${'9'.repeat(20)}.${'1'.repeat(20)}`, volume: '9223372036854775807' }]);
});

t.test('a day after tomorrow (UTC) is refused in every file; tomorrow is accepted', async (t) => {
  const day = (offset: number) =>
    new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
  const [tomorrow, later] = [day(1), day(2)];
  const mdY = (d: string) => `${d.slice(5, 7)}/${d.slice(8, 10)}/${d.slice(0, 4)}`;
  const member = await newOrganization(srv, 'Rates reader');
  const latestBefore = (await member.client.query('exchangeRates.get', {})).data.date;
  const cases: [string, () => Promise<unknown>][] = [
    [
      'plain',
      async () =>
        importFxRates(db, {
          file: await file(
            'future-plain.csv',
            `date,currency,rate\n2024-09-30,NGN,1668.5\n${later},NGN,1668.5\n`,
          ),
        }),
    ],
    [
      'ecb',
      async () =>
        importFxRates(db, {
          file: await file('future-ecb.csv', `Date,USD,JPY\n${later},1.1,160\n`),
        }),
    ],
    [
      'typo',
      async () =>
        importFxRates(db, {
          file: await file('typo.csv', 'date,currency,rate\n2204-09-30,NGN,1668.5\n'),
        }),
    ],
    [
      'history',
      async () =>
        importMarketData(db, 'history', {
          file: await file('future-history.csv', `symbol,date,close\nABC,${later},1\n`),
        }),
    ],
    [
      'treasury',
      async () =>
        importMarketData(db, 'treasury', {
          file: await file('future-treasury.csv', `Date,"1 Mo"\n${mdY(later)},4.1\n`),
        }),
    ],
  ];
  for (const [name, run] of cases)
    await t.rejects(run(), { name: 'ReferenceFileError', message: / is in the future$/ }, name);
  t.equal(
    (await member.client.query('exchangeRates.get', {})).data.date,
    latestBefore,
    'the latest day is still the real one',
  );
  t.same(
    parseFxCsv(`date,currency,rate\n${tomorrow},NGN,1668.5\n`).rates,
    [{ date: tomorrow, currency: 'NGN', value: '1668.5' }],
    'tomorrow (UTC) is accepted',
  );
});
