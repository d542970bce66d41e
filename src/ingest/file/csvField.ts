// The one CSV writer of ingestion's own files (the sheets of a workbook, the removed rows of a
// statement): a field is quoted when it holds a quote, a comma or a line break, or starts or ends
// with whitespace (a reader that trims unquoted fields would change the value); a quote inside is
// doubled (RFC 4180).

/** One field of a CSV line, quoted when it must be. */
export function csvField(s: string): string {
  return /[",\r\n]/.test(s) || s !== s.trim() ? `"${s.replace(/"/g, '""')}"` : s;
}
