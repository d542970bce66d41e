// Day/month order of a date column whose dates may read both ways (03/04/2024): decided from the
// column's values (one date with a day above 12 tells), else from the statement's period (only
// one order puts every date inside it), else from the payor's known convention; else undecided,
// and the statement asks, naming the column. Never a guess.
import { familyDateOrder } from '../suggest.ts';
import type { StatementFacts } from './facts.ts';
import type { AutoMapReason } from './reasons.ts';

const DAY_MONTH = /^(\d{1,2})[-/.](\d{1,2})[-/.](\d{4}|\d{2})(?:[ T].*)?$/;

type Order = 'DMY' | 'MDY';

export interface DayMonthDecision {
  /** null: the column has no day/month dates, or they are undecided (then `reason`) */
  order: Order | null;
  why: string;
  reason?: AutoMapReason;
}

interface Parsed {
  raw: string;
  a: number;
  b: number;
  year: number;
}

function iso(p: Parsed, order: Order): string | null {
  const [month, day] = order === 'DMY' ? [p.b, p.a] : [p.a, p.b];
  if (month < 1 || month > 12 || day < 1) return null;
  const d = new Date(Date.UTC(p.year, month - 1, day));
  if (d.getUTCMonth() !== month - 1) return null;
  return d.toISOString().slice(0, 10);
}

/** The day/month dates among a column's cells. */
function dayMonthDates(values: readonly string[]): Parsed[] {
  const parsed: Parsed[] = [];
  for (const v of values) {
    const m = DAY_MONTH.exec(v.trim());
    if (!m) continue;
    const y = m[3]!.length === 2 ? 2000 + Number(m[3]) : Number(m[3]);
    parsed.push({ raw: v.trim(), a: Number(m[1]), b: Number(m[2]), year: y });
  }
  return parsed;
}

/** What a column's own dates say: an order with the date that shows it, both (a contradiction), or nothing. */
function evidence(
  parsed: readonly Parsed[],
): { order: Order; example: string } | { both: [string, string] } | null {
  const dayFirst = parsed.find((p) => p.a > 12);
  const monthFirst = parsed.find((p) => p.b > 12);
  if (dayFirst && monthFirst) return { both: [dayFirst.raw, monthFirst.raw] };
  if (dayFirst) return { order: 'DMY', example: dayFirst.raw };
  if (monthFirst) return { order: 'MDY', example: monthFirst.raw };
  return null;
}

/** The order the file's date columns agree on by their own dates (`columns`: name → sampled cells), if they do. */
export function fileDayMonth(
  columns: ReadonlyMap<string, readonly string[]>,
): { order: Order; column: string; example: string } | null {
  let found: { order: Order; column: string; example: string } | null = null;
  for (const [column, values] of columns) {
    const e = evidence(dayMonthDates(values));
    if (e === null) continue;
    if ('both' in e || (found && found.order !== e.order)) return null;
    found ??= { order: e.order, column, example: e.example };
  }
  return found;
}

/** The order of a column's day/month dates (`values`: its sampled cells). */
export function decideDayMonth(
  values: readonly string[],
  context: {
    facts: StatementFacts;
    distributor: string | null;
    column: string;
    file: ReturnType<typeof fileDayMonth>;
  },
): DayMonthDecision {
  const parsed = dayMonthDates(values);
  if (parsed.length === 0) return { order: null, why: '' };
  const own = evidence(parsed);
  if (own && 'both' in own) {
    return {
      order: null,
      why: '',
      reason: {
        code: 'values_unreadable',
        message: `The dates of "${context.column}" are written in both orders (${own.both[0]} is day first, ${own.both[1]} month first).`,
      },
    };
  }
  if (own)
    return {
      order: own.order,
      why: `its dates are ${own.order === 'DMY' ? 'day' : 'month'} first (${own.example})`,
    };
  const { file } = context;
  if (file)
    return {
      order: file.order,
      why: `the file writes dates ${file.order === 'DMY' ? 'day' : 'month'} first ("${file.column}": ${file.example})`,
    };
  const period = context.facts.period;
  if (period) {
    const fits = (['DMY', 'MDY'] as const).filter((order) =>
      parsed.every((p) => {
        const d = iso(p, order);
        return d !== null && d >= period.start && d <= period.end;
      }),
    );
    if (fits.length === 1)
      return {
        order: fits[0]!,
        why: `only read ${fits[0] === 'DMY' ? 'day' : 'month'} first do its dates fall in the statement period ${period.value}`,
      };
  }
  const convention = familyDateOrder(context.distributor);
  if (convention)
    return {
      order: convention,
      why: `${context.distributor} writes dates ${convention === 'DMY' ? 'day' : 'month'} first`,
    };
  return {
    order: null,
    why: '',
    reason: {
      code: 'date_order_undecided',
      message: `Every date of "${context.column}" (such as ${parsed[0]!.raw}) reads both day first and month first, and neither the file, the statement's period nor its payor tells which: set the field's format to 'DMY' or 'MDY'.`,
      details: { examples: parsed.slice(0, 3).map((p) => p.raw) },
    },
  };
}
