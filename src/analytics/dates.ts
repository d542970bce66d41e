// Date ranges resolved the way Cube's api-gateway resolves them (dateParser.js, Cube 1.7), in
// the query's time zone (UTC unless it names one): the phrase is lower-cased and tried against these rules, first match wins, with
// unanchored patterns exactly like Cube's:
//   1. (this|last|next) <unit>          → the whole unit, shifted by 0/-1/+1
//   2. (last|next) <n> <unit>           → n whole units before (current one excluded) / after
//   3. today | yesterday | tomorrow     → that whole day
//   4. from <moment> to <moment>        → start of the first .. end of the second, rounded to
//                                          second/minute/hour when the phrase names one, else day
//   5. <moment>                          → that whole day (or second, minute, hour, as in 4)
// Cube reads <moment> with chrono-node; we read the forms listed in momentOf() and answer
// "Can't parse date" for anything else rather than guess. Weeks are ISO weeks (Monday first).
// Bounds are inclusive to the millisecond and written YYYY-MM-DDTHH:mm:ss.SSS without a zone:
// the wall-clock time of the query's zone. Cube computes with moment-timezone in that zone; we
// compute on the zone's wall clock (the instant plus the zone's offset at that instant), which is
// the same but for phrases in hours, minutes or seconds that cross a daylight-saving change.
// The calendar runs from 0001-01-01T00:00:00.000 to 9999-12-31T23:59:59.999 (UTC, proleptic
// Gregorian): a value or phrase that falls outside it is a DateParseError, never a bound written
// with a year of other than four digits. Calendar arithmetic goes through utc(), which reads
// years 0-99 as they are (Date.UTC reads them as 1900-1999).

export type Unit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year';
export type DateRange = [string, string];

export class DateParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DateParseError';
  }
}

const UNITS = 'second|minute|hour|day|week|month|year|quarter';
const DAY_MS = 86_400_000;

/**
 * The canonical IANA name of a time zone, in any letter case (`europe/london` is
 * `Europe/London`, as Cube canonicalises it), or undefined for a name that is not a zone. Offsets
 * such as `+01:00` are not IANA names and are refused, as Cube refuses them.
 */
export function canonicalZone(name: string): string | undefined {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

function zoneFormat(zone: string): Intl.DateTimeFormat {
  let f = zoneFormats.get(zone);
  if (!f) {
    const numeric = 'numeric' as const;
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      era: 'short',
      year: numeric,
      month: numeric,
      day: numeric,
      hour: numeric,
      minute: numeric,
      second: numeric,
    });
    zoneFormats.set(zone, f);
  }
  return f;
}

/** The wall-clock time of a zone at an instant (both milliseconds since the epoch; UTC is the instant itself). */
export function wallClock(t: number, zone: string): number {
  if (zone === 'UTC' || !Number.isFinite(t)) return t;
  const parts = Object.fromEntries(
    zoneFormat(zone)
      .formatToParts(new Date(t))
      .map((p) => [p.type, p.value]),
  );
  const year = parts.era === 'BC' ? 1 - Number(parts.year) : Number(parts.year);
  const ms = ((t % 1000) + 1000) % 1000;
  return utc(
    year,
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
    ms,
  );
}

/** Milliseconds since the epoch of a UTC calendar time; fields overflow as in Date.UTC, years 0-99 stay themselves. NaN beyond Date's range. */
export function utc(
  year: number,
  month: number,
  day = 1,
  hours = 0,
  minutes = 0,
  seconds = 0,
  ms = 0,
): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month, day);
  d.setUTCHours(hours, minutes, seconds, ms);
  return d.getTime();
}

/** The first and last day of the supported calendar. */
export const FIRST_DATE = '0001-01-01';
export const LAST_DATE = '9999-12-31';
const MIN_T = utc(1, 0, 1);
const MAX_T = utc(10_000, 0, 1) - 1;
const SUPPORTED = `the supported dates (${FIRST_DATE} to ${LAST_DATE}, UTC)`;

/** True for a time (milliseconds, UTC) within the supported calendar. */
export function inSupportedRange(t: number): boolean {
  return Number.isFinite(t) && t >= MIN_T && t <= MAX_T;
}

/** A timestamp (milliseconds, UTC) shifted by n units; months clamp to the last day like moment.js. */
export function addUnits(t: number, n: number, unit: Unit): number {
  switch (unit) {
    case 'second':
      return t + n * 1000;
    case 'minute':
      return t + n * 60_000;
    case 'hour':
      return t + n * 3_600_000;
    case 'day':
      return t + n * DAY_MS;
    case 'week':
      return t + n * 7 * DAY_MS;
    case 'month':
    case 'quarter':
    case 'year': {
      const months = n * (unit === 'month' ? 1 : unit === 'quarter' ? 3 : 12);
      const d = new Date(t);
      const y = d.getUTCFullYear();
      const m = d.getUTCMonth() + months;
      const targetYear = y + Math.floor(m / 12);
      const targetMonth = ((m % 12) + 12) % 12;
      const lastDay = new Date(utc(targetYear, targetMonth + 1, 0)).getUTCDate();
      const day = Math.min(d.getUTCDate(), lastDay);
      return utc(
        targetYear,
        targetMonth,
        day,
        d.getUTCHours(),
        d.getUTCMinutes(),
        d.getUTCSeconds(),
        d.getUTCMilliseconds(),
      );
    }
  }
}

export function startOf(t: number, unit: Unit): number {
  const d = new Date(t);
  const y = d.getUTCFullYear();
  const mo = d.getUTCMonth();
  switch (unit) {
    case 'second':
      return t - (((t % 1000) + 1000) % 1000);
    case 'minute':
      return utc(y, mo, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes());
    case 'hour':
      return utc(y, mo, d.getUTCDate(), d.getUTCHours());
    case 'day':
      return utc(y, mo, d.getUTCDate());
    case 'week': {
      const day = utc(y, mo, d.getUTCDate());
      const sinceMonday = (new Date(day).getUTCDay() + 6) % 7;
      return day - sinceMonday * DAY_MS;
    }
    case 'month':
      return utc(y, mo, 1);
    case 'quarter':
      return utc(y, mo - (mo % 3), 1);
    case 'year':
      return utc(y, 0, 1);
  }
}

export function endOf(t: number, unit: Unit): number {
  return addUnits(startOf(t, unit), 1, unit) - 1;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** YYYY-MM-DDTHH:mm:ss.SSS (UTC, no zone). Throws DateParseError outside the supported calendar. */
export function formatTimestamp(t: number): string {
  if (!inSupportedRange(t)) throw new DateParseError(`a date falls outside ${SUPPORTED}`);
  const d = new Date(t);
  const date = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  return `${date}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
}

/** A resolved phrase: both bounds within the supported calendar, else a DateParseError naming the phrase. */
function range(phrase: string, from: number, to: number): DateRange {
  if (!inSupportedRange(from) || !inSupportedRange(to))
    throw new DateParseError(`'${phrase}' falls outside ${SUPPORTED}`);
  return [formatTimestamp(from), formatTimestamp(to)];
}

const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
};
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

function monthNumber(word: string): number | undefined {
  const i = MONTHS.findIndex((m) => m === word || (word.length >= 3 && m.startsWith(word)));
  return i < 0 ? undefined : i;
}

// YYYY-MM-DD, optionally T (or a space) HH:mm[:ss[.S-SSS]], in any case; then optionally Z, or,
// after a time, a UTC offset ±HH[:mm] / ±HHmm.
const ABSOLUTE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[t ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?)?(z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * An absolute date or timestamp, or undefined when the text is not one (or names no such day or
 * time), on the wall clock of the zone `tz`. A value with Z or an offset is that instant, read in
 * `tz`: `2024-03-01T01:30+02:00` is 2024-02-29T23:30 in UTC, 2024-03-01T08:30 in Asia/Tokyo. `t`
 * may fall outside the supported calendar; absoluteBound() checks.
 */
export function parseAbsolute(
  text: string,
  tz = 'UTC',
): { t: number; hasTime: boolean } | undefined {
  const m = ABSOLUTE.exec(text.trim());
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map((v) => (v === undefined ? undefined : Number(v)));
  const ms = m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0'));
  const zone = m[8]?.toLowerCase();
  if ((h ?? 0) > 23 || (mi ?? 0) > 59 || (s ?? 0) > 59) return undefined;
  const local = utc(y!, mo! - 1, d!, h ?? 0, mi ?? 0, s ?? 0, ms);
  const check = new Date(local);
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo! - 1 || check.getUTCDate() !== d)
    return undefined;
  let offsetMinutes = 0;
  if (zone !== undefined && zone !== 'z') {
    // an offset belongs to a time of day: a bare date with one is not a value we read
    if (h === undefined) return undefined;
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2)) : 0;
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (oh * 60 + om);
  }
  // a value without Z or an offset is the zone's wall clock already; one with either is an
  // instant, read on the zone's wall clock (Cube: moment.tz(value, timezone))
  const instant = local - offsetMinutes * 60_000;
  return { t: zone === undefined ? instant : wallClock(instant, tz), hasTime: h !== undefined };
}

/** One point in time as chrono would read the forms we accept; undefined for anything else. */
export function momentOf(phrase: string, now: number, tz = 'UTC'): number | undefined {
  const text = phrase.trim().toLowerCase().replace(/\s+/g, ' ');
  if (text === 'now') return now;
  if (text === 'today') return now;
  if (text === 'yesterday') return addUnits(now, -1, 'day');
  if (text === 'tomorrow') return addUnits(now, 1, 'day');
  const absolute = parseAbsolute(text, tz);
  if (absolute) return absolute.t;
  const amount = (word: string) => (/^\d+$/.test(word) ? Number(word) : NUMBER_WORDS[word]);
  let m = new RegExp(
    `^(\\d+|${Object.keys(NUMBER_WORDS).join('|')}) (${UNITS})s? (ago|from now|later)$`,
  ).exec(text);
  if (m) {
    const n = amount(m[1]!)!;
    return addUnits(now, m[3] === 'ago' ? -n : n, m[2] as Unit);
  }
  m = new RegExp(`^in (\\d+|${Object.keys(NUMBER_WORDS).join('|')}) (${UNITS})s?$`).exec(text);
  if (m) return addUnits(now, amount(m[1]!)!, m[2] as Unit);
  // chrono's casual relative units: `past 12 months`, `last twelve months` (Cube's own rule 2 reads
  // digits after last/next only, so these reach chrono and are one moment, not a range)
  m = new RegExp(
    `^(last|past|next) (\\d+|${Object.keys(NUMBER_WORDS).join('|')}) (${UNITS})s?$`,
  ).exec(text);
  if (m) return addUnits(now, (m[1] === 'next' ? 1 : -1) * amount(m[2]!)!, m[3] as Unit);
  m = new RegExp(`^(last|next) (${WEEKDAYS.join('|')})$`).exec(text);
  if (m) {
    const target = WEEKDAYS.indexOf(m[2]!);
    const today = new Date(now).getUTCDay();
    const back = (today - target + 7) % 7 || 7;
    const ahead = (target - today + 7) % 7 || 7;
    return addUnits(now, m[1] === 'last' ? -back : ahead, 'day');
  }
  m = /^([a-z]+) (\d{4})$/.exec(text);
  if (m && monthNumber(m[1]!) !== undefined) return utc(Number(m[2]), monthNumber(m[1]!)!, 1);
  m = /^([a-z]+) (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})$/.exec(text) ?? null;
  const dayMonthYear = /^(\d{1,2})(?:st|nd|rd|th)? ([a-z]+),? (\d{4})$/.exec(text);
  const parts = m
    ? { month: m[1]!, day: m[2]!, year: m[3]! }
    : dayMonthYear
      ? { month: dayMonthYear[2]!, day: dayMonthYear[1]!, year: dayMonthYear[3]! }
      : undefined;
  if (parts && monthNumber(parts.month) !== undefined) {
    const t = utc(Number(parts.year), monthNumber(parts.month)!, Number(parts.day));
    if (new Date(t).getUTCDate() === Number(parts.day)) return t;
  }
  return undefined;
}

/** A relative phrase resolved at the instant `now` in the zone `tz`. Throws DateParseError. */
export function resolveRelative(phrase: string, instant: number, tz = 'UTC'): DateRange {
  const now = wallClock(instant, tz);
  const text = phrase.toLowerCase();
  let m = new RegExp(`(this|last|next)\\s+(${UNITS})`).exec(text);
  if (m) {
    const unit = m[2] as Unit;
    const t = addUnits(now, m[1] === 'last' ? -1 : m[1] === 'next' ? 1 : 0, unit);
    return range(phrase, startOf(t, unit), endOf(t, unit));
  }
  m = new RegExp(`(last|next)\\s+(\\d+)\\s+(${UNITS})`).exec(text);
  if (m) {
    const n = Number(m[2]);
    const unit = m[3] as Unit;
    if (m[1] === 'last')
      return range(
        phrase,
        startOf(addUnits(now, -n, unit), unit),
        endOf(addUnits(now, -1, unit), unit),
      );
    return range(
      phrase,
      startOf(addUnits(now, 1, unit), unit),
      endOf(addUnits(now, n, unit), unit),
    );
  }
  if (/today/.test(text)) return range(phrase, startOf(now, 'day'), endOf(now, 'day'));
  if (/yesterday/.test(text)) {
    const t = addUnits(now, -1, 'day');
    return range(phrase, startOf(t, 'day'), endOf(t, 'day'));
  }
  if (/tomorrow/.test(text)) {
    const t = addUnits(now, 1, 'day');
    return range(phrase, startOf(t, 'day'), endOf(t, 'day'));
  }
  // rules 4 and 5 round to the second, minute or hour when the phrase names one, else to the day
  const unit: Unit = (['second', 'minute', 'hour'] as const).find((u) => text.includes(u)) ?? 'day';
  m = /^from (.*) to (.*)$/.exec(text);
  if (m) {
    const from = momentOf(m[1]!, now, tz);
    const to = momentOf(m[2]!, now, tz);
    if (from === undefined || to === undefined)
      throw new DateParseError(`Can't parse date: '${phrase}'`);
    return range(phrase, startOf(from, unit), endOf(to, unit));
  }
  const t = momentOf(text, now, tz);
  if (t === undefined) throw new DateParseError(`Can't parse date: '${phrase}'`);
  return range(phrase, startOf(t, unit), endOf(t, unit));
}

/**
 * An absolute bound in the one form the cache key and the SQL use
 * (YYYY-MM-DDTHH:mm:ss.SSS, the wall clock of the zone `tz`): a bare date becomes its first (start) or last (end)
 * millisecond. Throws DateParseError for a value that is not a date or falls outside the
 * supported calendar.
 */
export function absoluteBound(value: string, side: 'start' | 'end', tz = 'UTC'): string {
  const parsed = parseAbsolute(value, tz);
  if (!parsed)
    throw new DateParseError(
      `'${value}' is not a date (YYYY-MM-DD or YYYY-MM-DDTHH:mm[:ss[.SSS]], optionally with Z or, after a time, an offset)`,
    );
  const t = parsed.hasTime || side === 'start' ? parsed.t : endOf(parsed.t, 'day');
  if (!inSupportedRange(t)) throw new DateParseError(`'${value}' falls outside ${SUPPORTED}`);
  return formatTimestamp(t);
}

export function isAbsolute(value: string): boolean {
  return parseAbsolute(value) !== undefined;
}

/**
 * A dateRange as the query gives it: a string (a phrase, or a date or timestamp alone: rule 5, its
 * whole day), or an array of one or two absolute values (a timestamp is kept as it is).
 */
export function resolveDateRange(
  value: string | readonly string[],
  now: number,
  tz = 'UTC',
): DateRange {
  if (typeof value === 'string') return resolveRelative(value, now, tz);
  if (value.length === 0 || value.length > 2)
    throw new DateParseError('a dateRange array has one or two dates');
  for (const v of value) {
    if (!isAbsolute(v))
      throw new DateParseError(
        `'${v}' is not a date: a relative phrase is given alone, not inside an array`,
      );
  }
  const [from, to = from] = value as [string, string?];
  return [absoluteBound(from, 'start', tz), absoluteBound(to, 'end', tz)];
}

/** The day after a date (YYYY-MM-DD); a DateParseError after the last supported day. */
export function nextDay(date: string): string {
  const parsed = parseAbsolute(date);
  if (!parsed || parsed.hasTime) throw new DateParseError(`'${date}' is not a date (YYYY-MM-DD)`);
  return formatTimestamp(parsed.t + DAY_MS).slice(0, 10);
}

/** True when the bound is the first millisecond of its day. */
export function isMidnight(bound: string): boolean {
  return bound.endsWith('T00:00:00.000');
}
