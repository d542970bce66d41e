// The rules of automatic mapping that need no service: statement facts from a preamble and a file
// name, totals compared to the printed decimal, and the day/month order of a date column.
import t from 'tap';
import { statementFacts, withFactVariables } from '../../src/ingest/autoMap/facts.ts';
import { decideDayMonth, fileDayMonth } from '../../src/ingest/autoMap/dateOrder.ts';
import { printedDecimals } from '../../src/ingest/autoMap/totals.ts';

const value = (facts: ReturnType<typeof statementFacts>) =>
  Object.fromEntries(Object.entries(facts).map(([k, v]) => [k, v.value]));

t.test('facts from the preamble, then the file name', async (t) => {
  t.same(
    value(
      statementFacts(
        {
          'Statement Period': '01/07/2023 - 31/12/2023',
          Currency: 'EUR',
          Payee: 'Orla Finn',
          'Account #': '100234',
        },
        'x.csv',
      ),
    ),
    {
      currency: 'EUR',
      period: '2023H2',
      payee: 'Orla Finn',
      account: '100234',
    },
  );
  const gema = statementFacts(
    { Abrechnungszeitraum: '01.01.2024 - 30.06.2024', Währung: 'EUR' },
    'gema.csv',
  );
  t.match(gema.period, {
    value: '2024H1',
    cadence: 'H',
    start: '2024-01-01',
    end: '2024-06-30',
    from: 'preamble',
    where: 'Abrechnungszeitraum',
  });
  t.same(
    value(statementFacts({ 'Period Start': '2024-04-01', 'Period End': '2024-06-30' }, 'x.csv')),
    { period: '2024Q2' },
    'a start and an end line',
  );
  t.same(
    value(statementFacts({}, 'Statement_EUR_2024-05.csv')),
    { currency: 'EUR', period: '2024M05' },
    'the file name',
  );
  t.same(
    value(statementFacts({}, 'all_royalties_cup.csv')),
    {},
    'only an upper-case code between separators is a currency',
  );
  t.same(
    value(statementFacts({ Currency: 'Dollars maybe' }, 'x.csv')),
    {},
    'an unreadable currency is no fact',
  );
  t.equal(statementFacts({ Payee: 'x'.repeat(5000) }, 'x.csv').payee?.value.length, 300, 'clipped');
  t.same(
    withFactVariables(
      { filePeriod: '2020M01' },
      statementFacts({ Period: '2024-03', Currency: 'GBP' }, 'x.csv'),
    ),
    { fileCurrency: 'GBP', filePeriod: '2020M01' },
    'the upload variable wins',
  );
});

t.test('totals to the printed decimal', async (t) => {
  t.equal(printedDecimals('1.297,28', true), 2);
  t.equal(printedDecimals('1,297', false), 0);
  t.equal(printedDecimals('€ 12.5', false), 1);
});

t.test(
  'day/month order: own dates, the file, the period, the payor, else a question',
  async (t) => {
    const none = { facts: {}, distributor: null, column: 'Date', file: null };
    t.match(decideDayMonth(['13/03/2024', '01/03/2024'], none), { order: 'DMY' });
    t.match(decideDayMonth(['03/13/2024', '03/01/2024'], none), { order: 'MDY' });
    t.match(decideDayMonth(['13/03/2024', '03/13/2024'], none), {
      order: null,
      reason: { code: 'values_unreadable' },
    });
    const undecided = decideDayMonth(['03/01/2024', '04/02/2024'], none);
    t.match(undecided, { order: null, reason: { code: 'date_order_undecided' } });
    t.match(undecided.reason?.message, /"Date"/, 'names the column');
    const file = fileDayMonth(
      new Map([
        ['Start', ['01/02/2024']],
        ['End', ['29/02/2024']],
      ]),
    );
    t.same(file, { order: 'DMY', column: 'End', example: '29/02/2024' });
    t.match(decideDayMonth(['01/02/2024'], { ...none, file }), { order: 'DMY' }, 'the file tells');
    const march = statementFacts({ Period: '2024-03' }, 'x.csv');
    t.match(
      decideDayMonth(['03/01/2024', '03/02/2024'], { ...none, facts: march }),
      { order: 'MDY' },
      'only month first falls in March 2024',
    );
    t.match(
      decideDayMonth(['03/03/2024'], { ...none, facts: march }),
      { order: null, reason: { code: 'date_order_undecided' } },
      'both fall in it',
    );
    t.match(
      decideDayMonth(['03/01/2024'], { ...none, distributor: 'Apple' }),
      { order: 'MDY' },
      "the payor's convention",
    );
    t.match(
      decideDayMonth(['2024-03-01', 'Mar 2024'], none),
      { order: null, reason: undefined },
      'no day/month dates',
    );
  },
);
