// Exchange rates: the ECB daily and historical formats and the plain format, zipped or not; the
// rule for a statement period (its last day, else the nearest earlier published day; no rate is
// null, never 1); the command-line import and the fx_rates_import job.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { Readable } from 'node:stream';
import Fastify from 'fastify';
import t from 'tap';
import { adminInProcess } from '../helpers/cli.ts';
import { parseEcbDate, parseFxCsv } from '../../src/fx/parse.ts';
import { importFxRates, MAX_REFERENCE_BYTES } from '../../src/fx/import.ts';
import { usdRate } from '../../src/fx/rates.ts';
import { fxRatesImportTask } from '../../src/jobs/tasks/fx_rates_import.ts';
import { taskList } from '../../src/jobs/tasks.ts';
import { ReferenceFileError } from '../../src/lookups/csv.ts';
import { startTestHandler } from '../helpers/handler.ts';
import { newOrganization } from '../helpers/principals.ts';
import { addJobUnchecked } from '../helpers/jobs.ts';

const dir = await mkdtemp(path.join(tmpdir(), 'fx-'));

const DAILY = `Date, USD, JPY, BGN, CZK, DKK, GBP, HUF, PLN, RON, SEK, CHF, ISK, NOK, TRY, AUD, BRL, CAD, CNY, HKD, IDR, ILS, INR, KRW, MXN, MYR, NZD, PHP, SGD, THB, ZAR, 
27 September 2024, 1.1158, 159.82, 1.9558, 25.158, 7.4562, 0.83450, 396.13, 4.2755, 4.9760, 11.2960, 0.9432, 150.70, 11.7875, 38.1212, 1.6184, 6.0585, 1.5089, 7.8268, 8.6744, 16889.25, 4.1273, 93.3720, 1466.76, 21.9360, 4.6066, 1.7586, 62.532, 1.4297, 36.191, 19.1451, 
`;

t.test('parsing the ECB daily file, the historical file and the plain format', async (t) => {
  t.equal(parseEcbDate('27 September 2024'), '2024-09-27');
  t.equal(parseEcbDate('2024-02-29'), '2024-02-29');
  t.equal(parseEcbDate('2023-02-29'), null);
  const daily = parseFxCsv(DAILY);
  t.equal(daily.format, 'ecb');
  t.equal(daily.rates.length, 30);
  t.same(daily.rates.slice(0, 2), [
    { date: '2024-09-27', currency: 'USD', value: '1.1158' },
    { date: '2024-09-27', currency: 'JPY', value: '159.82' },
  ]);
  const hist = parseFxCsv(
    'Date,USD,JPY,CYP,EEK,\n2007-12-31,1.4721,164.93,0.5853,15.6466,\n2007-12-28,1.4700,N/A,0.5842,15.6466,\n',
  );
  t.same(
    hist.skippedCurrencies,
    ['CYP', 'EEK'],
    'withdrawn currencies are not current ISO 4217 codes',
  );
  t.same(
    hist.rates.map((r) => `${r.date} ${r.currency} ${r.value}`),
    ['2007-12-31 USD 1.4721', '2007-12-31 JPY 164.93', '2007-12-28 USD 1.4700'],
  );
  const plain = parseFxCsv(
    'date,currency,rate\n2024-09-30,ngn,1668.5\n2024-09-30,USD,1\n2024-09-30,XYZ,2\n',
  );
  t.same(plain, {
    format: 'plain',
    rates: [{ date: '2024-09-30', currency: 'NGN', value: '1668.5' }],
    skippedCurrencies: ['XYZ'],
  });
  t.throws(() => parseFxCsv('hello,world\n1,2\n'), ReferenceFileError);
  t.throws(() => parseFxCsv(DAILY, 'plain'), ReferenceFileError);
  t.throws(() => parseFxCsv('date,currency,rate\n2024-09-30,NGN,-3\n'), ReferenceFileError);
  t.throws(() => parseFxCsv('date,currency,rate\n2024-09-30,NGN,0\n'), ReferenceFileError);
  t.throws(
    () => parseFxCsv('Date,JPY\n2024-09-30,160\n'),
    ReferenceFileError,
    'no USD column: nothing can be converted',
  );
  // every cell quoted, as spreadsheets export it, and longer than the first 4096 characters (which ended inside a quote)
  const quoted = Array.from(
    { length: 200 },
    (_, i) => `"${new Date(Date.UTC(2024, 0, 1 + i)).toISOString().slice(0, 10)}","NGN","1668.5"`,
  );
  const long = parseFxCsv(`\uFEFF"date","currency","rate"\r\n${quoted.join('\r\n')}\r\n`);
  t.equal(long.format, 'plain');
  t.equal(long.rates.length, 200);
  t.same(long.rates.at(-1), { date: '2024-07-18', currency: 'NGN', value: '1668.5' });
});

t.test(
  'rates with many decimals import exactly, both ways (an inverse printed from a float has 15-17 significant digits)',
  async (t) => {
    const srv = await startTestHandler(t);
    const db = srv.deps.pool;
    const plain = path.join(dir, 'many-decimals.csv');
    await writeFile(
      plain,
      'date,currency,rate\n2024-10-01,EUR,0.922764602749838\n2024-10-01,VND,24580.123456789012345678901234567890\n',
    );
    t.match(await importFxRates(db, { file: plain }), {
      format: 'plain',
      rows: 2,
      currencies: ['EUR', 'VND'],
    });
    const rates = (
      await db.query(
        `SELECT currency, per_usd::text, usd_per_unit::text FROM fx_rates WHERE rate_date = '2024-10-01' AND currency IN ('EUR', 'VND') ORDER BY currency`,
      )
    ).rows;
    t.same(
      rates.map((r) => [r.currency, r.per_usd]),
      [
        ['EUR', '0.922764602749838'],
        ['VND', '24580.12345678901234567890123456789'],
      ],
      'the published figures are kept to their last digit (trailing zeros trimmed)',
    );
    // US dollars per unit: PostgreSQL's quotient of the figure, 1 ÷ 0.922764602749838
    t.equal(rates[0].usd_per_unit, '1.0837000000000006');
    t.same(await usdRate(db, 'EUR', '2024-10-01'), {
      rate: '1.0837000000000006',
      date: '2024-10-01',
    });
    const member = await newOrganization(srv, 'Decimals reader');
    t.equal(
      (await member.client.query('exchangeRates.get', { date: '2024-10-01' })).data.rates.EUR,
      '0.922764602749838',
    );
    const ecb = parseFxCsv('Date,USD,JPY\n2024-10-01,1.1119,159.090000000000003\n');
    t.same(
      ecb.rates.map((r) => r.value),
      ['1.1119', '159.090000000000003'],
    );
    t.throws(() => parseFxCsv(`date,currency,rate\n2024-10-01,EUR,0.${'9'.repeat(31)}\n`), {
      message:
        /Line 2: "0\.9{31}" is not a positive decimal rate of at most 12 digits before the point and 30 after/,
    });
  },
);

t.test(
  'usdRate: the period end or the nearest earlier published day; null, never 1, without one',
  async (t) => {
    const srv = await startTestHandler(t);
    const db = srv.deps.pool;
    // the shipped snapshot: 2024-08-30 (a Friday) is the last published day of August 2024
    t.same(await usdRate(db, 'EUR', '2024-08-30'), { rate: '1.1087', date: '2024-08-30' });
    t.same(
      await usdRate(db, 'EUR', '2024-08-31'),
      { rate: '1.1087', date: '2024-08-30' },
      'a Saturday period end uses Friday',
    );
    t.same(await usdRate(db, 'gbp', '2024-09-01'), {
      rate: '1.3179980979553019',
      date: '2024-08-30',
    });
    t.same(await usdRate(db, 'JPY', '2024-07-31'), {
      rate: '0.0066527402310149914',
      date: '2024-07-31',
    });
    t.equal(await usdRate(db, 'EUR', '2024-07-30'), null, 'no rate published on or before the day');
    t.equal(
      await usdRate(db, 'RUB', '2024-09-26'),
      null,
      'a currency without rates is null, never 1',
    );
    t.equal(await usdRate(db, 'XXX', '2024-09-26'), null);
    t.same(await usdRate(db, 'USD', '2024-09-26'), { rate: '1', date: '2024-09-26' });

    const daily = path.join(dir, 'eurofxref.csv');
    await writeFile(daily, DAILY);
    const summary = await importFxRates(db, { file: daily });
    t.match(summary, {
      format: 'ecb',
      rows: 30,
      days: 1,
      from: '2024-09-27',
      to: '2024-09-27',
      skippedCurrencies: [],
      skippedDays: [],
    });
    t.equal(summary.currencies.length, 30);
    t.same(await usdRate(db, 'EUR', '2024-09-30'), { rate: '1.1158', date: '2024-09-27' });
    // 1 USD = 159.82 / 1.1158 JPY and 1 JPY = 1.1158 / 159.82 USD, each the quotient of the published figures to 20 decimals
    const { rows } = await db.query(
      `SELECT per_usd::text, usd_per_unit::text FROM fx_rates WHERE currency = 'JPY' AND rate_date = '2024-09-27'`,
    );
    t.same(rows, [{ per_usd: '143.2335544004301846', usd_per_unit: '0.00698160430484294832' }]);

    const plain = path.join(dir, 'plain.csv');
    await writeFile(plain, 'date,currency,rate\n2024-09-30,NGN,1668.5\n2024-09-27,NGN,1597.5\n');
    t.match(await importFxRates(db, { file: plain }, 'plain'), {
      format: 'plain',
      rows: 2,
      days: 2,
      currencies: ['NGN'],
    });
    t.same(await usdRate(db, 'NGN', '2024-09-29'), {
      rate: '0.00062597809076682316',
      date: '2024-09-27',
    });
    t.same(await usdRate(db, 'NGN', '2024-10-31'), {
      rate: '0.00059934072520227749',
      date: '2024-09-30',
    });
    await t.rejects(importFxRates(db, { file: plain }, 'ecb'), ReferenceFileError);
    const log = await db.query(
      `SELECT kind, status, error IS NOT NULL AS has_error FROM reference_imports ORDER BY created_at`,
    );
    t.same(log.rows, [
      { kind: 'fx', status: 'succeeded', has_error: false },
      { kind: 'fx', status: 'succeeded', has_error: false },
      { kind: 'fx', status: 'failed', has_error: true },
    ]);
  },
);

t.test('npm run admin -- fx import: ECB zip archives and plain files', async (t) => {
  const srv = await startTestHandler(t);
  const admin = adminInProcess(srv.config.databaseUrl);
  const hist = path.join(dir, 'eurofxref-hist.csv');
  await writeFile(
    hist,
    'Date,USD,JPY,GBP,CYP,\n2024-10-01,1.1119,159.09,0.83298,N/A,\n2024-09-30,1.1196,160.34,0.83540,N/A,\n',
  );
  execFileSync('python3', [
    '-c',
    `import zipfile; z = zipfile.ZipFile('${path.join(dir, 'eurofxref-hist.zip')}', 'w'); z.write('${hist}', 'eurofxref-hist.csv'); z.close()`,
  ]);
  const res = await admin(
    'fx',
    'import',
    '--file',
    path.join(dir, 'eurofxref-hist.zip'),
    '--format',
    'ecb',
    '--json',
  );
  t.equal(res.code, 0, res.stderr);
  t.same(JSON.parse(res.stdout), {
    format: 'ecb',
    rows: 6,
    days: 2,
    from: '2024-09-30',
    to: '2024-10-01',
    currencies: ['EUR', 'GBP', 'JPY'],
    skippedCurrencies: [],
    skippedDays: [],
    statementsRerated: 0,
  });
  t.same(await usdRate(srv.deps.pool, 'GBP', '2024-10-01'), {
    rate: '1.3348459746932699',
    date: '2024-10-01',
  });
  const missing = await admin('fx', 'import', '--file', path.join(dir, 'nope.csv'));
  t.equal(missing.code, 2);
  t.match(missing.stderr, /no such file/);
  t.equal((await admin('fx', 'import')).code, 2);
  t.equal((await admin('fx', 'import', '--file', hist, '--format', 'xml')).code, 2);
});

t.test(
  'oversized files are refused before they fill the memory: a zip bomb, a huge file, an endless download',
  async (t) => {
    const srv = await startTestHandler(t);
    const db = srv.deps.pool;
    // 600 KB of zip inflating to 600 MB (more than a string can hold: reading it whole crashed the process)
    const bomb = path.join(dir, 'bomb.zip');
    execFileSync('python3', [
      '-c',
      `import zipfile
z = zipfile.ZipFile('${bomb}', 'w', zipfile.ZIP_DEFLATED)
with z.open('eurofxref.csv', 'w', force_zip64=True) as f:
    f.write(b'date,currency,rate\\n')
    for i in range(600): f.write(b'\\n' * (1 << 20))
z.close()`,
    ]);
    await t.rejects(importFxRates(db, { file: bomb }), {
      name: 'ReferenceFileError',
      message: `eurofxref.csv in the archive is larger than ${MAX_REFERENCE_BYTES} bytes`,
    });
    const big = path.join(dir, 'big.csv');
    await writeFile(big, `date,currency,rate\n${'\n'.repeat(MAX_REFERENCE_BYTES)}`);
    await t.rejects(importFxRates(db, { file: big }), {
      name: 'ReferenceFileError',
      message: `${big} is larger than ${MAX_REFERENCE_BYTES} bytes`,
    });

    const server = Fastify({ forceCloseConnections: true });
    server.get('/endless.csv', async (_req, reply) => {
      // chunked, without a content length: counted as it arrives
      const body = new Readable({ read() {} });
      body.push('date,currency,rate\n');
      const mb = Buffer.alloc(1 << 20, 0x0a);
      let sent = 0;
      const timer = setInterval(() => {
        for (let i = 0; i < 8 && sent < 200; i++, sent++) body.push(mb);
        if (sent >= 200) {
          clearInterval(timer);
          body.push(null);
        }
      }, 1);
      body.on('close', () => clearInterval(timer));
      return reply.type('text/csv').send(body);
    });
    server.get('/declared.csv', (_req, reply) => {
      // a declared length over the limit is refused before the body is read
      reply.hijack();
      reply.raw.writeHead(200, {
        'content-type': 'text/csv',
        'content-length': String(MAX_REFERENCE_BYTES + 1),
      });
      reply.raw.write('date,currency,rate\n');
    });
    const base = await server.listen({ port: 0, host: '127.0.0.1' });
    t.teardown(() => {
      server.server.closeAllConnections();
      return server.close();
    });
    for (const name of ['endless.csv', 'declared.csv']) {
      const url = `${base}/${name}`;
      await t.rejects(
        importFxRates(db, { url }),
        {
          name: 'ReferenceFileError',
          message: `${url} is larger than ${MAX_REFERENCE_BYTES} bytes`,
        },
        name,
      );
    }
    const log = await db.query(`SELECT status, error FROM reference_imports ORDER BY created_at`);
    t.same(
      log.rows.map((r) => r.status),
      ['failed', 'failed', 'failed', 'failed'],
    );
  },
);

t.test('the fx_rates_import job: registered, payload checked, bad files not retried', async (t) => {
  t.type(taskList({} as any).fx_rates_import, 'function');
  const plain = path.join(dir, 'job.csv');
  await writeFile(plain, 'date,currency,rate\n2024-10-02,KES,129.1\n');
  const srv = await startTestHandler(t, {
    taskList: (deps) => ({ fx_rates_import: fxRatesImportTask(deps) }),
  });
  const db = srv.deps.pool;
  await addJobUnchecked(srv.deps.pool, 'fx_rates_import', { file: plain });
  await addJobUnchecked(srv.deps.pool, 'fx_rates_import', {
    file: path.join(dir, 'eurofxref.csv'),
    format: 'plain',
  });
  await addJobUnchecked(srv.deps.pool, 'fx_rates_import', { nonsense: true });
  const deadline = Date.now() + 20_000;
  let log: any[] = [];
  while (Date.now() < deadline) {
    log = (
      await db.query(`SELECT status, origin, error FROM reference_imports ORDER BY created_at`)
    ).rows;
    if (log.length >= 3) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.same(log.map((l) => l.status).sort(), ['failed', 'failed', 'succeeded']);
  t.ok(log.some((l) => l.status === 'failed' && /invalid payload/.test(l.error)));
  t.ok(log.some((l) => l.status === 'failed' && /plain date,currency,rate/.test(l.error)));
  t.same(await usdRate(db, 'KES', '2024-10-31'), {
    rate: '0.00774593338497288923',
    date: '2024-10-02',
  });
  // every job completed: none waits to be retried
  while (Date.now() < deadline) {
    const { rows } = await db.query(
      `SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = 'fx_rates_import'`,
    );
    if (rows[0].n === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const { rows } = await db.query(
    `SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = 'fx_rates_import'`,
  );
  t.equal(rows[0].n, 0);
});
