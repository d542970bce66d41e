// The SQL macros by which the normalizer reads amounts and percentages in DuckDB (created in the
// database of each run, seen by both of its connections). test/ingest/values.test.ts and
// footerTotals.test.ts read this text to check the JavaScript reader against it.

/** The macro of `name` (parse_amount, parse_percent, plain_amount, ...) for a rule: `name_dc` or `name_dp`. */
export function byRule(
  name:
    | 'parse_amount'
    | 'parse_percent'
    | 'plain_number'
    | 'plain_amount'
    | 'plain_percent'
    | 'fits_amount'
    | 'surely_fits_amount',
  decimalComma: boolean | 'true' | 'false',
): string {
  return `${name}_${decimalComma === true || decimalComma === 'true' ? 'dc' : 'dp'}`;
}

/** Reads an amount: currency codes and symbols, thousands separators, (1.23), 1.23-, −1.23, 1.2E-05. */
export const AMOUNT_MACRO = `
-- a mapped cell without its surrounding spaces, NULL when empty; most cells have none to trim, and
-- trim() (which copies every string) is then skipped
CREATE MACRO cell(s) AS CASE WHEN starts_with(s, ' ') OR ends_with(s, ' ') THEN NULLIF(trim(s), '') ELSE NULLIF(s, '') END;
-- negative in parentheses, also with a currency outside them (Excel's accounting format writes
-- "$ (1,234.56)", others "(12.50) EUR"): an opening one before the first digit, a closing one after the last
CREATE MACRO amount_sign(s) AS CASE
  WHEN (regexp_matches(s, '^[^0-9]*\\(') AND regexp_matches(s, '\\)[^0-9]*$')) OR regexp_matches(s, '^[^0-9]*[-−]')
    -- a minus after the number (SAP's 12.50-), also with a currency after or before it (12.50- EUR, 12.50 EUR-)
    OR regexp_matches(s, '[0-9.,]\\s*-[^0-9()]*$') OR regexp_matches(s, '[0-9.,][^0-9()]*-\\s*$') THEN -1 ELSE 1 END;
CREATE MACRO amount_digits(s) AS
  replace(regexp_replace(replace(replace(regexp_replace(regexp_replace(s, '[A-Za-z]{2,}', '', 'g'), '[^0-9.,eE+\\-]', '', 'g'), 'e-', 'E~'), 'E-', 'E~'), '[+\\-]', '', 'g'), 'E~', 'E-');
-- DuckDB reads text into a DECIMAL(18,12) (a 64-bit integer) about 4x faster than into DECIMAL(38,12),
-- with the same rounding: amounts under a million go that way, the rest directly; and it casts integer
-- text to DECIMAL(38,12) some 50x slower than decimal text: larger integers go via HUGEINT
CREATE MACRO cast_amount(s) AS coalesce(TRY_CAST(TRY_CAST(s AS DECIMAL(18,12)) AS DECIMAL(38,12)), CASE
  WHEN strpos(s, '.') = 0 AND strpos(s, 'e') = 0 AND strpos(s, 'E') = 0 THEN TRY_CAST(TRY_CAST(s AS HUGEINT) AS DECIMAL(38,12))
  ELSE TRY_CAST(s AS DECIMAL(38,12)) END);
-- a cell saying there is no amount (N/A, -, —, NULL): empty, not unreadable (Excel's #N/A is an error value and is)
-- list_contains, not IN: DuckDB turns an IN list of this length into a join with the list (a MARK
-- join), which is no faster and leaves the query's progress unreported (watchProgress)
CREATE MACRO no_amount(s) AS s IS NULL OR (length(s) <= 4 AND list_contains(['N/A', 'NA', '-', '--', '—', '–', 'NULL', 'NONE'], upper(s)));
-- Each macro taking a rule (decimal_comma) is written once per rule, _dp (a decimal point) and _dc
-- (a decimal comma), and the normalizer's SQL calls the one of its rule: DuckDB expands a macro's
-- body at every use of an argument, and binding both rules' branches, nested, made planning a small
-- statement's queries take most of its time (hundreds of milliseconds, seconds on a loaded machine).
-- The forms with the rule as an argument give the same values (the tests read amounts through them).
-- (cast_amount names its argument six times, and amount_digits is a dozen calls with regular
-- expressions: passed through a lambda's parameter, the digits are bound once, not six times.
-- Binding the readings of an amount took 2-6x as long without it; reading rows is no slower.)
CREATE MACRO amount_magnitude_dp(s) AS list_transform([replace(amount_digits(s), ',', '')], d -> cast_amount(d))[1];
CREATE MACRO amount_magnitude_dc(s) AS list_transform([replace(replace(amount_digits(s), '.', ''), ',', '.')], d -> cast_amount(d))[1];
CREATE MACRO amount_magnitude(s, decimal_comma) AS CASE WHEN decimal_comma THEN amount_magnitude_dc(s) ELSE amount_magnitude_dp(s) END;
-- a percentage (85%) is the fraction (0.85), rounded to the 12 decimals half away from zero; one
-- beyond 10^20 % is no percentage (unreadable)
CREATE MACRO percent_of(m) AS CASE WHEN m < 100000000000000000000 THEN CAST(m * 0.01 AS DECIMAL(38,12)) END;
CREATE MACRO parse_amount_slow_dp(s) AS CASE WHEN no_amount(s) THEN NULL
  WHEN strpos(s, '%') > 0 THEN amount_sign(s) * percent_of(amount_magnitude_dp(s))
  ELSE amount_sign(s) * amount_magnitude_dp(s) END;
CREATE MACRO parse_amount_slow_dc(s) AS CASE WHEN no_amount(s) THEN NULL
  WHEN strpos(s, '%') > 0 THEN amount_sign(s) * percent_of(amount_magnitude_dc(s))
  ELSE amount_sign(s) * amount_magnitude_dc(s) END;
CREATE MACRO parse_amount_slow(s, decimal_comma) AS CASE WHEN decimal_comma THEN parse_amount_slow_dc(s) ELSE parse_amount_slow_dp(s) END;
-- most cells are plain numbers: a direct cast, and the regular expressions only for the rest
CREATE MACRO parse_amount_dp(s) AS CASE WHEN s IS NULL THEN NULL ELSE coalesce(cast_amount(s), parse_amount_slow_dp(s)) END;
CREATE MACRO parse_amount_dc(s) AS CASE WHEN s IS NULL THEN NULL
  ELSE coalesce(CASE WHEN strpos(s, '.') = 0 THEN cast_amount(replace(s, ',', '.')) END, parse_amount_slow_dc(s)) END;
CREATE MACRO parse_amount(s, decimal_comma) AS CASE WHEN NOT decimal_comma THEN parse_amount_dp(s) ELSE parse_amount_dc(s) END;
-- a plain number: digits, perhaps a minus before them and a decimal separator between them
-- (cheap to test, by one regular expression). parse_amount reads one by its first branch alone, a
-- direct cast (a number of more digits than DECIMAL(38,12) holds is NULL by either): a column the
-- survey found plain numbers only is read by plain_amount, the same values without binding the
-- other readings (most of the cost of planning a small statement's rows). plain_amount reads
-- plain numbers only.
CREATE MACRO plain_number_dp(s) AS regexp_full_match(s, '-?[0-9]+([.][0-9]+)?');
CREATE MACRO plain_number_dc(s) AS regexp_full_match(s, '-?[0-9]+(,[0-9]+)?');
CREATE MACRO plain_amount_dp(s) AS cast_amount(s);
CREATE MACRO plain_amount_dc(s) AS cast_amount(replace(s, ',', '.'));
CREATE MACRO plain_percent_dp(s) AS percent_of(plain_amount_dp(s));
CREATE MACRO plain_percent_dc(s) AS percent_of(plain_amount_dc(s));
-- a number of a column of percentages (a field read in percent): 30 and 30% are both 0.3
CREATE MACRO parse_percent_dp(s) AS CASE WHEN strpos(s, '%') > 0 THEN parse_amount_dp(s) ELSE percent_of(parse_amount_dp(s)) END;
CREATE MACRO parse_percent_dc(s) AS CASE WHEN strpos(s, '%') > 0 THEN parse_amount_dc(s) ELSE percent_of(parse_amount_dc(s)) END;
CREATE MACRO parse_percent(s, decimal_comma) AS CASE WHEN decimal_comma THEN parse_percent_dc(s) ELSE parse_percent_dp(s) END;
-- whether a cell's separators fit the rule its column is read by, so that no cell is silently
-- read 100 or 1000 times too large or small ("12.00" read with a decimal comma is 1200): its
-- digits with their separators, without currency codes and symbols, signs, parentheses and percent
-- ("US$ (1.234,56)-" is "1.234,56"), must be a number written one way: groups of three digits
-- separated by the other separator (or a space, no-break space, thin space or apostrophe), then at
-- most one decimal separator, then an exponent. A cell without digits, or that reads as no number
-- by either rule (1,1,1 of 90 KB overflows), is unreadable or empty and counted as such; one that
-- only the other rule reads (1.000.000,1 with a decimal point) does not fit.
CREATE MACRO amount_shape(s) AS regexp_replace(
  regexp_replace(regexp_replace(s, '[A-Za-z]{2,}', '', 'g'), '[^0-9.,eE+\\-\\x{00a0}\\x{2009}\\x{202f}\\x{2019}'' ]', '', 'g'),
  '^[+\\-\\x{00a0}\\x{2009}\\x{202f}\\x{2019}'' ]+|[+\\-\\x{00a0}\\x{2009}\\x{202f}\\x{2019}'' ]+$', '', 'g');
-- (a CASE, whose later branches DuckDB evaluates only for the rows the earlier ones leave: most
-- cells hold one separator at most and no grouping space, and fit without a regular expression)
CREATE MACRO separators(s, c) AS length(s) - length(replace(s, c, ''));
-- surely_fits_amount: the cells that fit at a glance, by the first branches alone (the survey counts
-- the others, and a statement whose cells all fit so binds none of the rest)
CREATE MACRO surely_fits_amount_dp(s) AS s IS NULL OR (strpos(s, ' ') = 0 AND strpos(s, '''') = 0 AND separators(s, ',') = 0 AND separators(s, '.') <= 1);
CREATE MACRO surely_fits_amount_dc(s) AS s IS NULL OR (strpos(s, ' ') = 0 AND strpos(s, '''') = 0 AND separators(s, '.') = 0 AND separators(s, ',') <= 1);
CREATE MACRO fits_amount_dp(s) AS CASE
  WHEN surely_fits_amount_dp(s) THEN true
  WHEN NOT regexp_matches(s, '[0-9]') THEN true
  WHEN parse_amount_dp(s) IS NULL THEN parse_amount_dc(s) IS NULL
  ELSE regexp_full_match(amount_shape(s), '([0-9]+|[0-9]{1,3}([,\\x{00a0}\\x{2009}\\x{202f}\\x{2019}'' ][0-9]{3})+)?([.][0-9]*)?([eE][+\\-]?[0-9]+)?') END;
CREATE MACRO fits_amount_dc(s) AS CASE
  WHEN surely_fits_amount_dc(s) THEN true
  WHEN NOT regexp_matches(s, '[0-9]') THEN true
  WHEN parse_amount_dc(s) IS NULL THEN parse_amount_dp(s) IS NULL
  ELSE regexp_full_match(amount_shape(s), '([0-9]+|[0-9]{1,3}([.\\x{00a0}\\x{2009}\\x{202f}\\x{2019}'' ][0-9]{3})+)?(,[0-9]*)?([eE][+\\-]?[0-9]+)?') END;
CREATE MACRO fits_amount(s, decimal_comma) AS CASE WHEN decimal_comma THEN fits_amount_dc(s) ELSE fits_amount_dp(s) END;
`;
