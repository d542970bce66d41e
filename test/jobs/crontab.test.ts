// The job runner's own schedule, parsed by graphile-worker exactly as the runner parses it.
import { parseCrontab } from 'graphile-worker';
import t from 'tap';
import { loadConfig } from '../../src/config.ts';
import { crontab } from '../../src/jobs/tasks.ts';

t.test('upload expiry, enrichment, runner recovery and lookup flags every minute; the daily exchange-rate import', async (t) => {
  const items = parseCrontab(crontab(loadConfig({})));
  t.same(
    items.map((i) => [i.task, i.identifier, i.payload]),
    [
      ['statement_upload_expire', 'statement_upload_expire', null],
      ['catalog_enrich_tick', 'catalog_enrich_tick', null],
      ['job_runner_recover', 'job_runner_recover', null],
      ['statement_lookup_flags', 'statement_lookup_flags', null],
      ['fx_rates_import', 'fx_rates_daily', { url: 'https://www.ecb.europa.eu/stats/eurofxref/eurofxref.zip', format: 'ecb' }],
    ],
  );
});

t.test('an empty URL or schedule turns the import off; a bad schedule fails at start', async (t) => {
  t.same(parseCrontab(crontab(loadConfig({ FX_RATES_URL: '' }))).map((i) => i.task), ['statement_upload_expire', 'catalog_enrich_tick', 'job_runner_recover', 'statement_lookup_flags']);
  t.same(parseCrontab(crontab(loadConfig({ FX_RATES_CRON: '' }))).map((i) => i.task), ['statement_upload_expire', 'catalog_enrich_tick', 'job_runner_recover', 'statement_lookup_flags']);
  t.throws(() => loadConfig({ FX_RATES_CRON: 'every day' }), /FX_RATES_CRON/);
  t.throws(() => loadConfig({ FX_RATES_URL: 'ftp://x' }), /FX_RATES_URL/);
});
