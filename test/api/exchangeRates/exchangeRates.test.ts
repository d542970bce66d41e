// exchangeRates.get: any authenticated caller, a flat object with the day actually used, base USD
// and exact rates by ISO code, from the shipped ECB snapshot.
import t from 'tap';
import { newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { data } from '../../lookups/helpers.ts';
import { isError } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'FX Org');

t.test('latest rates without a date: flat, base USD, exact decimal strings', async (t) => {
  const res = data(await owner.client.query('exchangeRates.get'));
  t.equal(res.date, '2024-09-26');
  t.equal(res.base, 'USD');
  t.same(res.earlierDates, {});
  // ECB 2024-09-26: 1 EUR = 1.1155 USD = 160.78 JPY
  t.equal(res.rates.USD, '1');
  t.equal(res.rates.EUR, '0.89645898700134468848');
  t.equal(res.rates.JPY, '144.132675930076199');
  t.equal(Object.keys(res.rates).length, 31);
  t.equal(res.rates.RUB, undefined, 'a currency the ECB no longer publishes has no rate');
  t.same(Object.keys(res).sort(), ['base', 'date', 'earlierDates', 'rates']);
});

t.test('a date uses that day, or the nearest earlier published day', async (t) => {
  t.equal(
    data(await owner.client.query('exchangeRates.get', { date: '2024-08-30' })).date,
    '2024-08-30',
  );
  const weekend = data(await owner.client.query('exchangeRates.get', { date: '2024-09-01' }));
  t.equal(weekend.date, '2024-08-30');
  t.equal(weekend.rates.GBP, '0.75872643636691620817');
  isError(
    t,
    await owner.client.query('exchangeRates.get', { date: '1999-01-01' }),
    'NOT_FOUND',
    'FX_RATES_NOT_FOUND',
  );
  isError(
    t,
    await owner.client.query('exchangeRates.get', { date: '2024-02-30' }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  // year 0000 is no date PostgreSQL keeps: refused as input, not a database error
  isError(
    t,
    await owner.client.query('exchangeRates.get', { date: '0000-01-01' }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(
    t,
    await owner.client.query('exchangeRates.get', { date: '0001-01-01' }),
    'NOT_FOUND',
    'FX_RATES_NOT_FOUND',
  );
  isError(
    t,
    await owner.client.query('exchangeRates.get', { date: '30/08/2024' }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

t.test(
  'a plain import of one currency on a later day: the others come from their latest day',
  async (t) => {
    await srv.deps.pool.query(
      `INSERT INTO fx_rates (currency, rate_date, per_usd, usd_per_unit, source) VALUES ('NGN', '2024-09-27', 1597.5, trim_scale(1 / 1597.5::numeric), 'plain')`,
    );
    const res = data(await owner.client.query('exchangeRates.get'));
    t.equal(res.date, '2024-09-27');
    t.equal(res.rates.NGN, '1597.5');
    t.equal(res.rates.EUR, '0.89645898700134468848');
    t.equal(res.earlierDates.EUR, '2024-09-26');
    t.equal(res.earlierDates.NGN, undefined);
  },
);

t.test(
  'any authenticated caller, no organization needed; anonymous callers are refused',
  async (t) => {
    const stranger = await outsider(srv, owner.organizationId);
    t.equal(
      data(await stranger.client.query('exchangeRates.get', { date: '2024-09-25' })).date,
      '2024-09-25',
    );
    isError(t, await srv.anonymous.query('exchangeRates.get'), 'UNAUTHORIZED', 'AUTH_REQUIRED');
    isError(
      t,
      await owner.client.call('POST', 'exchangeRates.get', {}),
      'BAD_REQUEST',
      'METHOD_NOT_SUPPORTED',
    );
  },
);
