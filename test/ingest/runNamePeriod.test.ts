// A period at the start of a run's name (Cargo Records' `Statement Run Name`: `2023Q4 Digital`),
// read by a period field mapped to that column, through the file reader and the normalizer; and
// the values that look alike but are no run's period.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { libraryDir } from '../../src/ingest/library.ts';
import { parseDate, parsePeriod } from '../../src/ingest/values.ts';
import { normalizeFile, parquetRows } from '../helpers/normalize.ts';

const fixture = readFileSync(
  path.join(import.meta.dirname, '../../fixtures/statements/cargo-royalty_extended.csv'),
  'utf8',
);
const library = JSON.parse(
  readFileSync(path.join(libraryDir, 'cargo-digital-runs.json'), 'utf8'),
) as { fields: Record<string, unknown> };

t.test(
  'a quarter or half at the start of a run name, followed by words, is that period',
  async (t) => {
    const q = (year: number, period: number, cadence = 'Q') => ({ year, period, cadence });
    const read: [string, { year: number; period: number; cadence: string } | null][] = [
      ['2023Q4 Digital', q(2023, 4)],
      ['2023-Q4 Physical', q(2023, 4)],
      ['2023 Q4 Digital Run', q(2023, 4)],
      ['Q4 2023 Digital', q(2023, 4)],
      ['q1-2024 digital', q(2024, 1)],
      ['2023Q4 Café Sales', q(2023, 4)],
      ['2023H2 Digital', q(2023, 2, 'H')],
      ['H1 2024 Digital', q(2024, 1, 'H')],
      // no run's period: words with digits, a range written backwards, a joining word, no space, a
      // period after the words, a month (`2024-03 Digital` could be a catalogue number), no quarter
      ['2023Q4 Digital 2', null],
      ['Q3 2024 to Q1 2024', null],
      ['2023Q4 to', null],
      ['2023Q4Digital', null],
      ['Digital 2023Q4', null],
      ['2024-03 Digital', null],
      ['2023Q5 Digital', null],
      ['H3 2023 Digital', null],
      ['2023Q4 (Digital)', null],
    ];
    for (const [raw, want] of read) {
      const p = parsePeriod(raw);
      t.same(p && { year: p.year, period: p.period, cadence: p.cadence }, want, raw);
      t.equal(parseDate(raw), null, `${raw}: no date`);
    }
  },
);

t.test(
  "Cargo's Statement Run Name as the statement period: each row's quarter, none missing",
  async (t) => {
    const lines = fixture.trimEnd().split('\n');
    // the last five rows of another run: a statement of two quarters
    const csv = `${[...lines.slice(0, 16), ...lines.slice(16).map((l) => l.replace(/,2023Q4 Digital$/, ',2023Q3 Digital'))].join('\n')}\n`;
    t.equal(csv.split('2023Q3 Digital').length - 1, 5);
    const fields = {
      ...library.fields,
      stmtYear: { column: 'Statement Run Name' },
      stmtPeriod: { column: 'Statement Run Name' },
      stmtCadence: { column: 'Statement Run Name' },
    };
    const { out, outPath } = await normalizeFile(t, csv, fields, {
      fileName: 'royalty_extended.csv',
    });
    t.equal(out.keptRows, 20);
    t.equal(out.issues.missingStmtPeriod, 0, 'every row has its period');
    t.equal(out.stmtPeriods, 2);
    t.same(out.stmt, { year: 2023, period: 2, cadence: 'H' }, 'the half that holds both quarters');
    const rows = await parquetRows(outPath, 'stmt_year, stmt_period, stmt_cadence');
    t.same(rows.slice(0, 15), Array(15).fill([2023, 4, 'Q']));
    t.same(rows.slice(15), Array(5).fill([2023, 3, 'Q']));
    t.equal(out.net, '223.014277475000', 'the amounts as before');
  },
);
