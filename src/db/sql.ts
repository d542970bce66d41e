// SQL text built from values: identifiers, string literals where a statement takes no parameters
// (DuckDB's COPY ... TO, DDL), and LIKE patterns that match user text literally. Standard SQL
// quoting, the same in PostgreSQL (standard_conforming_strings, its default) and DuckDB: inside
// quotes neither reads any escape but the doubled quote. The one home of these rules.

/** A double-quoted identifier: any name, a double quote inside it doubled. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * A value as a string literal. Inside '...' neither database reads an escape sequence but the
 * doubled quote, so doubling quotes is the whole of it; NUL, which neither stores in text, is
 * refused. Like a parameter, an untyped literal takes its type from where it stands
 * (`uuid_column = '…'` compares UUIDs, `CAST('…' AS DATE)` is a date).
 */
export function sqlLiteral(value: string): string {
  if (value.includes('\0')) throw new Error('a value with a NUL character cannot enter SQL');
  return `'${value.replace(/'/g, "''")}'`;
}

/** Text for a LIKE or ILIKE pattern that matches it literally: `\`, `%` and `_` escaped with `\` (the default ESCAPE). */
export function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}

/** A LIKE pattern that matches the text anywhere. */
export function likeContains(text: string): string {
  return `%${likeEscape(text)}%`;
}

/** A LIKE pattern that matches what starts with the text. */
export function likePrefix(text: string): string {
  return `${likeEscape(text)}%`;
}

/** A sort order as SQL: `DESC` for `desc`, `ASC` otherwise (the specification's default is `asc`). */
export function sortDirection(sortOrder: 'asc' | 'desc' | undefined): 'ASC' | 'DESC' {
  return sortOrder === 'desc' ? 'DESC' : 'ASC';
}

/** A sort a client picks by name: the names, and the ORDER BY each gives. */
export interface Sortable<K extends string> {
  /** the names a client may sort by, as z.enum and paginationSchema take them */
  readonly keys: readonly [K, ...K[]];
  /** ORDER BY's list (without the keyword): the named expression in the direction asked, then the tiebreak */
  orderBy(key: K, sortOrder: 'asc' | 'desc' | undefined): string;
}

/**
 * The sort of a list: `columns` maps each name a client may send to its SQL expression, and
 * `tiebreak` (a unique column) orders rows of equal value, so pages neither repeat nor skip a row.
 * `nullsLast`: rows without a value come after the others in either direction (PostgreSQL puts
 * them first in a descending sort); `tiebreakFollows`: the tiebreak in the direction asked
 * (ascending otherwise).
 */
export function sortable<const C extends Record<string, string>>(
  columns: C,
  tiebreak: string,
  opts: { nullsLast?: boolean; tiebreakFollows?: boolean } = {},
): Sortable<keyof C & string> {
  const keys = Object.keys(columns) as [keyof C & string, ...(keyof C & string)[]];
  if (keys.length === 0) throw new Error('a sort needs at least one column');
  return {
    keys,
    orderBy(key, sortOrder) {
      // the names are checked by the procedure's zod enum; a name from elsewhere is a bug, never SQL text
      if (!Object.hasOwn(columns, key)) throw new Error(`no sort named ${key}`);
      const dir = sortDirection(sortOrder);
      return `${columns[key]} ${dir}${opts.nullsLast ? ' NULLS LAST' : ''}, ${tiebreak}${opts.tiebreakFollows ? ` ${dir}` : ''}`;
    },
  };
}
