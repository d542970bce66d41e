// The admin commands' usage, apart from the commands themselves: `npm run admin -- --help` is
// answered without loading the runtime they need (src/main.ts).

export const ADMIN_USAGE = `Usage: npm run admin -- <command> [options]

  bootstrap --email EMAIL --org-name NAME [--platform-role c2_superadmin|c2_customer_support] [--json]
      Create (or reuse) the user as owner of a new organization with an API key of full scope.
  api-key create --email EMAIL --org ORG_ID [--name NAME] [--patterns 'rightsholder.*,cube.query'] [--json]
      Create an API key for a member of the organization (default scope: every procedure).
  api-key list [--email EMAIL] [--org ORG_ID] [--json]
  api-key delete --id KEY_ID [--json]
  user set-password --email EMAIL [--json]
      Set the user's sign-in password, read from standard input (never from the command line):
      \`printf '%s' "$PASSWORD" | npm run admin -- user set-password --email a@b.c\`. One trailing
      line break is dropped. Also how a forgotten password is reset.
  oauth rotate-keys [--json]
      A new OAuth signing key and cookie secret take over; the previous ones stay valid through the
      change, older ones are removed. Running API processes take the new keys within a minute.
  fx import (--file F | --url U) [--format ecb|plain] [--json]
      Load exchange rates: the ECB reference-rate CSV (daily or historical, zipped or not; euro base,
      stored against the US dollar) or a plain date,currency,rate CSV (units per US dollar).
  market import --kind history|symbols|treasury (--file F | --url U) [--symbol S] [--json]
      Load market data: prices (symbol,date,open,high,low,close,volume, or a one-symbol
      Date,Open,High,Low,Close,Volume download with --symbol), symbols (symbol,name,currency,exchange),
      or the US Treasury daily par yield curve CSV.
  reprocess --org ORG_ID [--rightsholder ID] [--distributor ID] [--mapping ID] [--status processed,failed,...]
            [--since DATE] [--no-wait] [--no-local-worker] [--json]
      Reprocess every matching statement (default statuses: processed, failed, needs_mapping, skipped, bad),
      showing counts by state until done. Rows are replaced atomically per statement. Exits 3 when any
      of them ended failed (named on stderr); with --no-wait, 0 once they are queued.
`;

/** `--help` or `-h` anywhere among the arguments: the usage, whatever else was typed. */
export function asksForHelp(argv: string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}
