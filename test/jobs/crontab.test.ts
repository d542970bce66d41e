// The job runner's own schedule, parsed by graphile-worker exactly as the runner parses it.
import { parseCrontab } from 'graphile-worker';
import { pino } from 'pino';
import t from 'tap';
import { loadConfig } from '../../src/config.ts';
import { crontabTasks, workerLogger } from '../../src/jobs/runner.ts';
import { crontab } from '../../src/jobs/tasks.ts';

t.test(
  'upload expiry, enrichment, runner recovery and lookup flags every minute; the export expiry sweep hourly; the daily exchange-rate import',
  async (t) => {
    const items = parseCrontab(crontab(loadConfig({})));
    t.same(
      items.map((i) => [i.task, i.identifier, i.payload]),
      [
        ['statement_upload_expire', 'statement_upload_expire', null],
        ['catalog_enrich_tick', 'catalog_enrich_tick', null],
        ['job_runner_recover', 'job_runner_recover', null],
        ['statement_lookup_flags', 'statement_lookup_flags', null],
        ['export_expire_sweep', 'export_expire_sweep', null],
        [
          'fx_rates_import',
          'fx_rates_daily',
          { url: 'https://www.ecb.europa.eu/stats/eurofxref/eurofxref.zip', format: 'ecb' },
        ],
      ],
    );
    const sweep = items.find((i) => i.task === 'export_expire_sweep')!;
    const at = (min: number, hour: number) => ({ min, hour, date: 25, month: 11, dow: 3 });
    t.same(
      [
        sweep.match(at(0, 0)),
        sweep.match(at(0, 13)),
        sweep.match(at(1, 13)),
        sweep.match(at(30, 13)),
      ],
      [true, true, false, false],
      'the sweep at the top of every hour',
    );
  },
);

t.test(
  'an empty URL or schedule turns the import off; a bad schedule fails at start',
  async (t) => {
    t.same(
      parseCrontab(crontab(loadConfig({ FX_RATES_URL: '' }))).map((i) => i.task),
      [
        'statement_upload_expire',
        'catalog_enrich_tick',
        'job_runner_recover',
        'statement_lookup_flags',
        'export_expire_sweep',
      ],
    );
    t.same(
      parseCrontab(crontab(loadConfig({ FX_RATES_CRON: '' }))).map((i) => i.task),
      [
        'statement_upload_expire',
        'catalog_enrich_tick',
        'job_runner_recover',
        'statement_lookup_flags',
        'export_expire_sweep',
      ],
    );
    t.throws(() => loadConfig({ FX_RATES_CRON: 'every day' }), /FX_RATES_CRON/);
    t.throws(() => loadConfig({ FX_RATES_URL: 'ftp://x' }), /FX_RATES_URL/);
  },
);

t.test(
  "the crontab's every-minute tasks log their successful runs at debug; other tasks' and every failure stay visible",
  async (t) => {
    const lines: { level: number; msg: string }[] = [];
    const log = pino(
      { level: 'debug' },
      { write: (line: string) => void lines.push(JSON.parse(line)) },
    );
    const routine = crontabTasks(crontab(loadConfig({})));
    t.same([...routine].sort(), [
      'catalog_enrich_tick',
      'export_expire_sweep',
      'fx_rates_import',
      'job_runner_recover',
      'statement_lookup_flags',
      'statement_upload_expire',
    ]);
    const logger = workerLogger(log as never, routine);
    const done = (task: string) =>
      logger.info(`Completed task 1 (${task}, 2.00ms) with success`, {
        job: { task_identifier: task } as never,
        success: true,
      });
    done('job_runner_recover');
    done('statement_ingest');
    logger.error('Failed task 2 (job_runner_recover, 2.00ms) with error boom', {
      job: { task_identifier: 'job_runner_recover' } as never,
    });
    t.same(
      lines.map((l) => [l.level, l.msg.split(' (')[0]]),
      [
        [20, 'Completed task 1'],
        [30, 'Completed task 1'],
        [50, 'Failed task 2'],
      ],
    );
  },
);
